import HarnessModel

/// A threshold of a scenario file checked on the median of a strategy's `ok` repetitions.
public struct ThresholdJudgement: Sendable, Hashable {
    public var threshold: Threshold
    /// A metric figure's unit, as the run's cases report it; nil for the harness's own figures.
    public var unit: Metric.Unit?
    /// The subject's median; nil when no completed case of its strategy reports the figure.
    public var median: Double?
    /// The spread of the subject's repetitions, percent, when known.
    public var spreadPercent: Double?
    /// For a limit relative to another strategy's figure: that figure's median; nil otherwise or when it has none.
    public var baseMedian: Double?
    /// The value the median is held to (the limit, or factor × the other median); nil when either has no value.
    public var limit: Double?

    /// Checks `threshold` in `run`.
    public init(_ threshold: Threshold, in run: ScenarioRun) {
        self.threshold = threshold
        unit = run.unit(of: threshold.subject.figure)
        let subject = ThresholdEvaluator.median(threshold.subject, in: run)
        median = subject?.median
        spreadPercent = subject?.spread
        switch threshold.limit {
        case .absolute(let value):
            limit = value
        case .relative(let factor, let other):
            baseMedian = ThresholdEvaluator.median(other, in: run)?.median
            limit = baseMedian.map { factor * $0 }
        }
    }

    /// True when the median holds against the limit; false when either has no value (a check is never skipped in
    /// silence).
    public var passed: Bool {
        guard let median, let limit else { return false }
        return threshold.comparison.holds(median, limit)
    }

    /// Checks every threshold whose strategies ran here; one naming a strategy without any case in this run (another
    /// shard ran it) is skipped, not failed.
    public static func evaluate(_ thresholds: [Threshold], in run: ScenarioRun) -> [ThresholdJudgement] {
        let ran = Set(run.cases.map(\.strategy))
        return thresholds.filter { threshold in
            guard ran.contains(threshold.subject.strategy) else { return false }
            if case .relative(_, let other) = threshold.limit { return ran.contains(other.strategy) }
            return true
        }.map { ThresholdJudgement($0, in: run) }
    }
}
