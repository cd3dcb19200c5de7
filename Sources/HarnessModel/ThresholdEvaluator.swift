/// The values of a strategy's figure that thresholds, baselines and history read: its `ok` repetitions' (the
/// judgement of a threshold is Verdicts' `ThresholdJudgement`).
public enum ThresholdEvaluator {
    /// Median and spread of a figure over a strategy's `ok` cases; nil when none has it.
    public static func median(_ reference: FigureReference, in run: ScenarioRun) -> (median: Double, spread: Double?)? {
        let values = values(reference, in: run)
        guard let median = Statistics.median(values) else { return nil }
        return (median, Statistics.spreadPercent(values))
    }

    /// The figure's values over a strategy's `ok` cases, in run order. A heap-graph figure comes from the
    /// strategy's instrumented case, the one case that captures the heap.
    public static func values(_ reference: FigureReference, in run: ScenarioRun) -> [Double] {
        (reference.figure.isHeapGraph ? run.instrumentedCases : run.cases).filter { $0.strategy == reference.strategy }
            .compactMap { reference.figure.value(in: $0) }
    }
}
