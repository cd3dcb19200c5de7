/// `repetitions: auto`: run each strategy until the 95% interval of its median (see `MedianInterval`) lies
/// within ±`target` of the median, at least `minimum` and at most `maximum` times.
///
/// The plan says so; execution decides the count (asking `decision` after each round) and the results carry it.
public struct AdaptiveRepetitions: Sendable, Hashable, Codable {
    /// The widest the interval may reach from the median, relative to it (0.02: within ±2%).
    public var target: Double
    /// Repetitions run before the interval is judged; at least `MedianInterval.minimumCount` (6).
    public var minimum: Int
    /// Repetitions after which a strategy stops, narrow or not.
    public var maximum: Int

    /// ±2%: the run-to-run spread of the steady peaks (README, "Gate stability").
    public static let defaultTarget = 0.02
    /// 6: the fewest values a 95% interval of the median exists for.
    public static let defaultMinimum = MedianInterval.minimumCount
    /// 15: the interval is then x(4)…x(12), roughly ±0.7 standard deviations for normal noise.
    public static let defaultMaximum = 15
    /// The range of `minimum` and `maximum`: no 95% interval below 6, and 100 like fixed repetitions.
    public static let countRange = MedianInterval.minimumCount...100
    /// The range of `target`: 0.1% to 50%.
    public static let targetRange = 0.001...0.5

    public init(
        target: Double = AdaptiveRepetitions.defaultTarget, minimum: Int = AdaptiveRepetitions.defaultMinimum,
        maximum: Int = AdaptiveRepetitions.defaultMaximum
    ) {
        self.target = target
        self.minimum = minimum
        self.maximum = maximum
    }

    /// What to do with a strategy after a round.
    public enum Decision: Sendable, Hashable {
        /// Run one more repetition.
        case more
        /// Stop: the reason says why.
        case stop(StopReason)
    }

    /// Why a strategy stopped repeating.
    public enum StopReason: String, Sendable, Hashable, Codable {
        /// The interval of every watched figure lies within the target.
        case narrow
        /// `maximum` repetitions ran.
        case maximum
        /// A repetition did not complete (crash, failure, timeout, memory limit): more would not narrow a median.
        case incomplete
    }

    /// The stopping rule, a pure function of what a strategy measured so far.
    /// - Parameters:
    ///   - attempts: repetitions run, completed or not.
    ///   - incomplete: how many of them did not complete.
    ///   - figures: per watched figure, its values over the completed repetitions. A figure some completed
    ///     repetition lacks is not watched (its median would be of a subset).
    /// - Returns: `.more` below `minimum`; `.stop(.maximum)` at `maximum`; `.stop(.incomplete)` when a
    ///   repetition did not complete; `.stop(.narrow)` when every watched figure's 95% interval is within
    ///   ±`target` of its median; `.more` otherwise.
    public func decision(attempts: Int, incomplete: Int, figures: [[Double]]) -> Decision {
        if attempts < minimum { return .more }
        if attempts >= maximum { return .stop(.maximum) }
        if incomplete > 0 { return .stop(.incomplete) }
        for values in figures where values.count == attempts - incomplete {
            guard let interval = MedianInterval(values), interval.relativeReach <= target else { return .more }
        }
        return .stop(.narrow)
    }

    /// The stopping rule on one strategy's results (attributed cases left out) and the figures it watches.
    public func decision(for results: [CaseResult], watching watched: [Figure]) -> Decision {
        let measured = results.filter { !$0.isInstrumented }
        let completed = measured.compactMap(\.completed)
        let figures = watched.map { figure in completed.compactMap { figure.value(in: $0) } }
        return decision(attempts: measured.count, incomplete: measured.count - completed.count, figures: figures)
    }

    /// The figures whose intervals decide when to stop: the one a baseline keeps (the exact peak when peaks
    /// are exact, else peak allocated), and the ranking figure when the scenario ranks by another one.
    public static func watchedFigures(ranking: Figure, exactPeaks: Bool) -> [Figure] {
        let gated: Figure = exactPeaks ? .exactPeak : .peakAllocated
        return ranking == .peakAllocated || ranking == gated ? [gated] : [gated, ranking]
    }

    /// The watched figures of a run as recorded (exact peaks when a completed case has them).
    public static func watchedFigures(of run: ScenarioRun) -> [Figure] {
        watchedFigures(ranking: run.ranking, exactPeaks: run.cases.contains { $0.completed?.exact != nil })
    }
}
