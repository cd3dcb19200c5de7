/// A scenario-specific figure of a case (callbacks delivered, staleness p99, images loaded).
public struct Metric: Sendable, Hashable, Codable {
    /// The unit a metric value is expressed in.
    public enum Unit: String, Sendable, Hashable, Codable {
        case count, bytes, milliseconds, ratio
        case perSecond = "per-second"
    }
    /// Name in lowerCamelCase, unique within a case.
    public var name: String
    /// The value, in `unit`.
    public var value: Double
    /// The unit of `value`.
    public var unit: Unit

    public init(name: String, value: Double, unit: Unit) {
        self.name = name
        self.value = value
        self.unit = unit
    }
}
