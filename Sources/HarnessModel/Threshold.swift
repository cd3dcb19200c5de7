/// A comparison operator of a threshold.
public enum Comparison: String, Sendable, Hashable, Codable, CaseIterable {
    case lessOrEqual = "<="
    case less = "<"
    case greaterOrEqual = ">="
    case greater = ">"
    case equal = "=="

    public func holds(_ left: Double, _ right: Double) -> Bool {
        switch self {
        case .lessOrEqual: return left <= right
        case .less: return left < right
        case .greaterOrEqual: return left >= right
        case .greater: return left > right
        case .equal: return left == right
        }
    }
}

/// A limit stated in a scenario file, checked on the median of the repetitions.
public struct Threshold: Sendable, Hashable, Codable {
    /// What the limit is: a fixed value, or a factor of another strategy's figure.
    public enum Limit: Sendable, Hashable, Codable {
        case absolute(Double)
        case relative(factor: Double, of: FigureReference)
    }
    public var subject: FigureReference
    public var comparison: Comparison
    public var limit: Limit
    /// The threshold as written, e.g. `signal-next.peakAllocated <= 0.1 * unbounded-dispatch.peakAllocated`.
    public var text: String
    /// Where it is written: file, line and column.
    public var file: String
    public var line: Int
    public var column: Int

    public init(
        subject: FigureReference, comparison: Comparison, limit: Limit, text: String, file: String, line: Int,
        column: Int
    ) {
        self.subject = subject
        self.comparison = comparison
        self.limit = limit
        self.text = text
        self.file = file
        self.line = line
        self.column = column
    }
}
