/// How many repetitions of each strategy a scenario runs: a fixed count, or as many as its noise needs.
public enum RepetitionPolicy: Sendable, Hashable, Codable, ExpressibleByIntegerLiteral {
    /// Exactly this many per strategy.
    case fixed(Int)
    /// Repeat each strategy until the 95% interval of its median is narrow enough (`AdaptiveRepetitions`).
    case auto(AdaptiveRepetitions)

    /// A fixed count: `repetitions: 3` in code as in a scenario file.
    public init(integerLiteral value: Int) { self = .fixed(value) }

    /// The most repetitions a strategy may run.
    public var maximum: Int {
        switch self {
        case .fixed(let count): return count
        case .auto(let adaptive): return adaptive.maximum
        }
    }

    /// The repetitions every strategy runs before any is judged.
    public var minimum: Int {
        switch self {
        case .fixed(let count): return count
        case .auto(let adaptive): return adaptive.minimum
        }
    }
}
