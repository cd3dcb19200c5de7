/// A parameter of a scenario as it was run, for the report.
public struct NamedValue: Sendable, Hashable, Codable {
    public var name: String
    public var value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
