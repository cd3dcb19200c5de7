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

/// Resolved parameter values of a case or step, read by name with the declared type.
///
/// Reading a name the workload did not declare, or with another kind, is a programming error
/// of the workload and stops the case with a message naming the parameter.
public struct ParameterValues: Sendable, Hashable, Codable {
    /// Values by parameter name.
    public var values: [String: ParameterValue]

    public init(_ values: [String: ParameterValue] = [:]) {
        self.values = values
    }

    public subscript(name: String) -> ParameterValue? {
        get { values[name] }
        set { values[name] = newValue }
    }

    public func count(_ name: String) -> Int {
        guard case .count(let value)? = values[name] else { mismatch(name, "count") }
        return value
    }

    public func bytes(_ name: String) -> Int {
        guard case .bytes(let value)? = values[name] else { mismatch(name, "bytes") }
        return value
    }

    /// A rate, events per second.
    public func rate(_ name: String) -> Double {
        guard case .rate(let value)? = values[name] else { mismatch(name, "rate") }
        return value
    }

    public func duration(_ name: String) -> Duration {
        guard case .duration(let value)? = values[name] else { mismatch(name, "duration") }
        return .nanoseconds(value)
    }

    public func fraction(_ name: String) -> Double {
        guard case .fraction(let value)? = values[name] else { mismatch(name, "fraction") }
        return value
    }

    public func flag(_ name: String) -> Bool {
        guard case .flag(let value)? = values[name] else { mismatch(name, "flag") }
        return value
    }

    public func choice(_ name: String) -> String {
        guard case .choice(let value)? = values[name] else { mismatch(name, "choice") }
        return value
    }

    private func mismatch(_ name: String, _ kind: String) -> Never {
        preconditionFailure(
            "workload read parameter '\(name)' as \(kind), but the case has "
                + "\(values[name].map { "\($0)" } ?? "no such parameter")"
        )
    }
}
