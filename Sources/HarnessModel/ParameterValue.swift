/// A typed parameter value of a scenario, with its unit carried by the case.
public enum ParameterValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A plain count (documents, iterations, cells).
    case count(Int)
    /// A size in bytes.
    case bytes(Int)
    /// A rate in events per second.
    case rate(perSecond: Double)
    /// A duration in nanoseconds.
    case duration(nanoseconds: Int64)
    /// A share in 0...1.
    case fraction(Double)
    /// A switch.
    case flag(Bool)
    /// One of a fixed set of words.
    case choice(String)

    /// The value as the scenario file would spell it (`4.00 KiB`, `500/s`, `3.00 s`, `50%`).
    public var description: String {
        switch self {
        case .count(let value): return String(value)
        case .bytes(let value): return Units.formatBytes(value)
        case .rate(let value): return "\(Units.fixed(value, decimals: value == value.rounded() ? 0 : 2))/s"
        case .duration(let value): return Units.formatDuration(nanoseconds: value)
        case .fraction(let value):
            return "\(Units.fixed(value * 100, decimals: value * 100 == (value * 100).rounded() ? 0 : 1))%"
        case .flag(let value): return String(value)
        case .choice(let value): return value
        }
    }
}

extension ParameterValue {
    /// The value in base units (count, bytes, per second, nanoseconds, fraction); nil for flags and choices.
    public var baseUnitValue: Double? {
        switch self {
        case .count(let value): return Double(value)
        case .bytes(let value): return Double(value)
        case .rate(let value): return value
        case .duration(let value): return Double(value)
        case .fraction(let value): return value
        case .flag: return nil
        // Text that is a number (a command scenario's `documents: 20000`) still sweeps along an axis.
        case .choice(let text): return Double(text)
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        // Durations beyond ~292 years do not occur in scenarios; saturate rather than trap.
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : product + attoseconds / 1_000_000_000
    }
}
