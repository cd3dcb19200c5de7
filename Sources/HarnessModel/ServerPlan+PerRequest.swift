/// The agent's exact counts in a server at one moment (a sample of its stream): what per-request figures are
/// differences of.
public struct ExactCounts: Sendable, Hashable, Codable {
    /// Live bytes (usable sizes of the blocks allocated and not freed).
    public var liveBytes: Int64
    /// Allocation calls made so far (malloc, calloc, realloc, aligned calls, operator new), every thread's.
    public var allocationCalls: Int64
    /// The bytes those calls handed out, cumulatively.
    public var allocatedBytes: Int64

    public init(liveBytes: Int64, allocationCalls: Int64, allocatedBytes: Int64) {
        self.liveBytes = liveBytes
        self.allocationCalls = allocationCalls
        self.allocatedBytes = allocatedBytes
    }
}

/// One round of a load step: the load client's figures and the server's exact counts just before and just after it.
public struct LoadRound: Sendable, Hashable, Codable {
    public var figures: LoadFigures
    public var before: ExactCounts
    public var after: ExactCounts
    /// The highest live bytes sampled during the round.
    public var peakLiveBytes: Int64

    public init(figures: LoadFigures, before: ExactCounts, after: ExactCounts, peakLiveBytes: Int64) {
        self.figures = figures
        self.before = before
        self.after = after
        self.peakLiveBytes = peakLiveBytes
    }

    /// Allocation calls per answered request during the round; nil when none was answered.
    public var allocationsPerRequest: Double? {
        figures.requests > 0 ? Double(after.allocationCalls - before.allocationCalls) / Double(figures.requests) : nil
    }

    /// Bytes allocated per answered request during the round; nil when none was answered.
    public var bytesPerRequest: Double? {
        figures.requests > 0 ? Double(after.allocatedBytes - before.allocatedBytes) / Double(figures.requests) : nil
    }
}

/// A slope with its confidence interval, robust to one-off steps: the Theil–Sen estimator.
///
/// A server's live bytes read between rounds are exact, so they hardly scatter; what moves them besides growth is a
/// one-off step (a lazily built runtime cache, 16 to 128 B, in the first few thousand requests) or a block that
/// happens to be live at one boundary. Least squares through such points gives a slope with an interval a few bytes
/// wide that excludes 0: one step read as growth. The median of the slopes between every two points moves little
/// for one step, and tracks a steady growth exactly.
public struct SlopeInterval: Sendable, Hashable, Codable {
    public var slope: Double
    /// The interval's ends; nil with fewer than three points (no noise to estimate).
    public var lower: Double?
    public var upper: Double?

    /// The Theil–Sen slope of `points` (the median of the slopes between every two points of distinct x) and Sen's
    /// 95% interval, which assumes nothing of the noise's distribution: the pairwise slopes of ranks (N − C) / 2 and
    /// (N + C) / 2 + 1 of N, C = 1.96 × the standard deviation of Kendall's S, √(n(n − 1)(2n + 5) / 18) for n points
    /// (the form without ties: wider than the tied one). With three to five points it is the whole range of the
    /// pairwise slopes. nil with fewer than two distinct x values.
    public init?(_ points: [(x: Double, y: Double)]) {
        var slopes: [Double] = []
        for (index, first) in points.enumerated() {
            for second in points[(index + 1)...] where second.x != first.x {
                slopes.append((second.y - first.y) / (second.x - first.x))
            }
        }
        guard !slopes.isEmpty else { return nil }
        slopes.sort()
        let count = slopes.count
        slope = (slopes[(count - 1) / 2] + slopes[count / 2]) / 2
        guard points.count >= 3 else { return }
        let n = Double(points.count)
        let spread = 1.959_964 * (n * (n - 1) * (2 * n + 5) / 18).squareRoot()
        let lowerRank = max(Int(((Double(count) - spread) / 2).rounded()), 1)
        let upperRank = min(Int(((Double(count) + spread) / 2).rounded()) + 1, count)
        lower = slopes[lowerRank - 1]
        upper = slopes[upperRank - 1]
    }
}

/// A load step's per-request figures, from the rounds measured after its warm-up rounds.
///
/// - Allocations and bytes per request: the minimum over the measured rounds (noise only adds allocations: a
///   background task, a lazily built cache), as allocation-limit scripts take it.
/// - Live growth per 1,000 requests: the Theil–Sen slope of the live bytes after each round over the requests
///   answered since the warm-up (`SlopeInterval`), with its 95% interval when there are at least two measured rounds.
/// - Peak per concurrent request: the highest live bytes sampled in a measured round above the live bytes before it,
///   over the step's connections.
public struct PerRequestFigures: Sendable, Hashable, Codable {
    public var allocationsPerRequest: Double
    public var bytesPerRequest: Double
    public var liveGrowthPer1000Requests: SlopeInterval?
    public var peakPerConcurrentRequest: Double

    /// The figures of `rounds` (the measured ones) of a step with `connections`; nil when no round answered a request.
    public init?(rounds: [LoadRound], connections: Int) {
        guard let allocations = rounds.compactMap(\.allocationsPerRequest).min(),
            let bytes = rounds.compactMap(\.bytesPerRequest).min(), let first = rounds.first
        else { return nil }
        allocationsPerRequest = allocations
        bytesPerRequest = bytes
        var points = [(x: 0.0, y: Double(first.before.liveBytes))]
        var answered = 0
        for round in rounds {
            answered += round.figures.requests
            points.append((x: Double(answered) / 1000, y: Double(round.after.liveBytes)))
        }
        liveGrowthPer1000Requests = SlopeInterval(points)
        let peak = rounds.map { $0.peakLiveBytes - $0.before.liveBytes }.max() ?? 0
        peakPerConcurrentRequest = Double(max(peak, 0)) / Double(max(connections, 1))
    }

    /// The figures as a case's metrics, named after the step's phase as its load figures are.
    public func metrics(phase: String) -> [Metric] {
        let name = { LoadFigures.metricName($0, phase: phase) }
        var metrics = [
            Metric(name: name("allocationsPerRequest"), value: allocationsPerRequest, unit: .count),
            Metric(name: name("bytesPerRequest"), value: bytesPerRequest, unit: .bytes),
        ]
        if let growth = liveGrowthPer1000Requests {
            metrics.append(Metric(name: name("liveGrowthPer1000Requests"), value: growth.slope, unit: .bytes))
            if let lower = growth.lower, let upper = growth.upper {
                metrics.append(Metric(name: name("liveGrowthPer1000RequestsLow"), value: lower, unit: .bytes))
                metrics.append(Metric(name: name("liveGrowthPer1000RequestsHigh"), value: upper, unit: .bytes))
            }
        }
        metrics.append(Metric(name: name("peakPerConcurrentRequest"), value: peakPerConcurrentRequest, unit: .bytes))
        return metrics
    }
}

extension ServerStep {
    /// The metrics every step gives when the agent counts exactly (a server with a load step): the allocation calls
    /// made and the bytes they handed out between the samples just before and just after the step.
    public static func allocationMetrics(phase: String, before: ExactCounts, after: ExactCounts) -> [Metric] {
        [
            Metric(
                name: LoadFigures.metricName("allocations", phase: phase),
                value: Double(after.allocationCalls - before.allocationCalls), unit: .count),
            Metric(
                name: LoadFigures.metricName("allocatedBytes", phase: phase),
                value: Double(after.allocatedBytes - before.allocatedBytes), unit: .bytes),
        ]
    }
}
