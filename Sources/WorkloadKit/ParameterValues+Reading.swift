import HarnessModel

/// A workload's reading of its parameters, by name with the declared type.
///
/// Reading a name the workload did not declare, or with another kind, is a programming error of the workload
/// and stops the case with a message naming the parameter.
extension ParameterValues {
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
