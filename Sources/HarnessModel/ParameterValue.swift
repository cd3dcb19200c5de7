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
        case let .count(value): return String(value)
        case let .bytes(value): return Units.formatBytes(value)
        case let .rate(value): return "\(Units.fixed(value, decimals: value == value.rounded() ? 0 : 2))/s"
        case let .duration(value): return Units.formatDuration(nanoseconds: value)
        case let .fraction(value): return "\(Units.fixed(value * 100, decimals: value * 100 == (value * 100).rounded() ? 0 : 1))%"
        case let .flag(value): return String(value)
        case let .choice(value): return value
        }
    }
}

extension ParameterValue {
    /// The value in base units (count, bytes, per second, nanoseconds, fraction); nil for flags and choices.
    public var baseUnitValue: Double? {
        switch self {
        case let .count(value): return Double(value)
        case let .bytes(value): return Double(value)
        case let .rate(value): return value
        case let .duration(value): return Double(value)
        case let .fraction(value): return value
        case .flag, .choice: return nil
        }
    }
}
