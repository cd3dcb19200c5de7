/// Resolved parameter values of a case or step, by name; a workload reads them with the declared type
/// (`count(_:)`, `bytes(_:)`, …, in WorkloadKit).
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
}
