/// A confidence interval of a median: two of the repetitions' own values, chosen so the true median lies
/// between them with at least the stated confidence, whatever the distribution of the values.
///
/// Method (distribution-free, from order statistics): for n values sorted x(1) ≤ … ≤ x(n), each value lies
/// below the true median with probability 1/2, so the number below it is Binomial(n, 1/2) and
/// [x(k), x(n+1−k)] covers the median with probability 1 − 2·P(B ≤ k−1), B ~ Binomial(n, 1/2). The interval
/// takes the largest k whose coverage is still at least the confidence asked for (the narrowest such pair).
/// No normality is assumed, which suits peaks that jump between a few levels. At 95% it needs at least
/// 6 values (with 5, even [min, max] covers the median only 93.75% of the time): n = 6…8 gives
/// [min, max], n = 9…11 the second-smallest and second-largest, n = 15 x(4)…x(12).
public struct MedianInterval: Sendable, Hashable, Codable {
    /// The median of the values (the mean of the two middle ones for an even count).
    public var median: Double
    /// The interval's ends: the k-th smallest and the k-th largest value.
    public var lower: Double
    public var upper: Double
    /// The rank k of the ends, from 1 (1: the smallest and the largest value).
    public var rank: Int
    /// How many values the interval was taken from.
    public var count: Int
    /// The interval's exact coverage, 0...1: at least the confidence asked for (0.961 for 9 values at 95%).
    public var coverage: Double

    /// The 95% interval of the median of `values`; nil with fewer than 6 values (none exists) or a value that is not
    /// finite.
    public init?(_ values: [Double], confidence: Double = MedianInterval.defaultConfidence) {
        guard values.allSatisfy(\.isFinite), let rank = Self.rank(count: values.count, confidence: confidence),
            let median = Statistics.median(values)
        else { return nil }
        let sorted = values.sorted()
        self.median = median
        lower = sorted[rank - 1]
        upper = sorted[sorted.count - rank]
        self.rank = rank
        count = values.count
        coverage = Self.coverage(count: values.count, rank: rank)
    }

    /// The confidence every interval of memharness is taken at: 95%.
    public static let defaultConfidence = 0.95

    /// The fewest values a 95% interval of the median can be taken from.
    public static let minimumCount = 6

    /// The largest rank k whose interval [x(k), x(n+1−k)] covers the median with at least `confidence`;
    /// nil when even [min, max] does not (too few values).
    public static func rank(count: Int, confidence: Double) -> Int? {
        guard count >= 1 else { return nil }
        var best: Int?
        for rank in 1...((count + 1) / 2) where coverage(count: count, rank: rank) >= confidence {
            best = rank
        }
        return best
    }

    /// 1 − 2·P(B ≤ rank − 1) for B ~ Binomial(count, 1/2): the chance that [x(rank), x(count+1−rank)] holds the median.
    public static func coverage(count: Int, rank: Int) -> Double {
        // P(B ≤ j) summed term by term: C(n, i)/2^n, each term from the previous one (no factorials to overflow).
        var term = 1.0
        for _ in 0..<count { term /= 2 }
        var below = 0.0
        for i in 0..<max(rank, 0) {
            below += term
            term = term * Double(count - i) / Double(i + 1)
        }
        // Two ranks from opposite ends cross in the middle: such an "interval" covers nothing.
        return max(0, 1 - 2 * below)
    }

    /// How far the interval reaches from the median, relative to it: max(median − lower, upper − median) / |median|.
    /// 0 when every end equals the median (a zero median included); infinite when the median is 0 and an end is not.
    public var relativeReach: Double {
        let reach = max(median - lower, upper - median)
        guard reach > 0 else { return 0 }
        return median == 0 ? .infinity : reach / abs(median)
    }

    /// The lower end relative to the median, as a signed fraction (−0.021 for 2.1% below).
    public var relativeLower: Double { median == 0 ? 0 : (lower - median) / abs(median) }
    /// The upper end relative to the median, as a signed fraction.
    public var relativeUpper: Double { median == 0 ? 0 : (upper - median) / abs(median) }
}
