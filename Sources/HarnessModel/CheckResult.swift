/// The outcome of one check (a threshold, a baseline comparison or a leak expectation).
public struct CheckResult: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case threshold, baseline, leak
    }
    public var kind: Kind
    public var scenario: String
    public var strategy: String
    /// A short name for the check, e.g. `signal-next.peakAllocated <= 32.00 MiB`.
    public var name: String
    public var passed: Bool
    /// The measured value, formatted (median over repetitions).
    public var actual: String
    /// The limit it was held to, formatted.
    public var limit: String
    /// How far inside (positive) or beyond (negative) the limit, as text (e.g. `+12.3%`).
    public var margin: String
    /// The full message for a failure: what, by how much, where to look.
    public var message: String
    /// Spread of the repetitions for the checked figure, percent, when known.
    public var spreadPercent: Double?
    /// Where the check is declared (file:line:column), when it comes from a file.
    public var file: String?
    public var line: Int?
    public var column: Int?

    public init(
        kind: Kind, scenario: String, strategy: String, name: String, passed: Bool, actual: String, limit: String,
        margin: String, message: String, spreadPercent: Double? = nil, file: String? = nil, line: Int? = nil,
        column: Int? = nil
    ) {
        self.kind = kind
        self.scenario = scenario
        self.strategy = strategy
        self.name = name
        self.passed = passed
        self.actual = actual
        self.limit = limit
        self.margin = margin
        self.message = message
        self.spreadPercent = spreadPercent
        self.file = file
        self.line = line
        self.column = column
    }
}
