/// Evaluates thresholds on the median of each strategy's `ok` repetitions.
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
        (reference.figure.isHeapGraph ? run.attributedCases : run.cases).filter { $0.strategy == reference.strategy }
            .compactMap { reference.figure.value(in: $0) }
    }

    /// Checks every threshold whose strategies ran here; one naming a strategy without any case in
    /// this run (another shard ran it) is skipped, not failed.
    public static func evaluate(_ thresholds: [Threshold], in run: ScenarioRun) -> [CheckResult] {
        let ran = Set(run.cases.map(\.strategy))
        return thresholds.filter { threshold in
            guard ran.contains(threshold.subject.strategy) else { return false }
            if case .relative(_, let other) = threshold.limit { return ran.contains(other.strategy) }
            return true
        }.map { evaluate($0, in: run) }
    }

    public static func evaluate(_ threshold: Threshold, in run: ScenarioRun) -> CheckResult {
        let figure = threshold.subject.figure
        let unit: Metric.Unit? = {
            guard case .metric(let name) = figure else { return nil }
            return run.cases.lazy.compactMap { $0.metric(name)?.unit }.first
        }()
        func format(_ value: Double, _ figure: Figure) -> String { figure.format(value, unit: unit) }
        func result(passed: Bool, actual: String, limit: String, margin: String, message: String, spread: Double? = nil)
            -> CheckResult
        {
            CheckResult(
                kind: .threshold, scenario: run.name, strategy: threshold.subject.strategy, name: threshold.text,
                passed: passed,
                actual: actual, limit: limit, margin: margin, message: message, spreadPercent: spread,
                file: threshold.file, line: threshold.line, column: threshold.column)
        }
        guard let subject = median(threshold.subject, in: run) else {
            return result(
                passed: false, actual: "–", limit: "–", margin: "–",
                message:
                    "\(threshold.subject) has no value: no completed case of `\(threshold.subject.strategy)` "
                    + "reports \(figure)"
            )
        }
        let limitValue: Double
        let limitText: String
        switch threshold.limit {
        case .absolute(let value):
            limitValue = value
            limitText = format(value, figure)
        case .relative(let factor, let other):
            guard let base = median(other, in: run) else {
                return result(
                    passed: false, actual: format(subject.median, figure), limit: "–", margin: "–",
                    message: "\(other) has no value: no completed case of `\(other.strategy)` reports \(other.figure)")
            }
            limitValue = factor * base.median
            limitText =
                "\(format(limitValue, figure)) "
                + "(\(Units.fixed(factor, decimals: factor == factor.rounded() ? 0 : 2)) × \(other) = "
                + "\(format(base.median, other.figure)))"
        }
        let passed = threshold.comparison.holds(subject.median, limitValue)
        let margin = margin(
            subject.median, limit: limitValue, comparison: threshold.comparison,
            formatted: format(subject.median, figure))
        let message =
            passed
            ? "\(threshold.subject) = \(format(subject.median, figure)) \(threshold.comparison.rawValue) \(limitText)"
            : "\(threshold.subject) = \(format(subject.median, figure)) breaks `\(threshold.text)` (limit "
                + "\(limitText), off by \(margin)); see the `\(run.name)` section of report.md and "
                + "\(threshold.file):\(threshold.line)"
        return result(
            passed: passed, actual: format(subject.median, figure),
            limit: "\(threshold.comparison.rawValue) \(limitText)",
            margin: margin, message: message, spread: subject.spread)
    }

    /// How far inside (+) or outside (−) the limit `value` is, in percent of the limit; with a limit of 0,
    /// "0" or the value itself (`formatted`).
    static func margin(_ value: Double, limit: Double, comparison: Comparison, formatted: String) -> String {
        guard limit != 0 else { return value == 0 ? "0" : formatted }
        let relative = (limit - value) / abs(limit) * 100
        let inside = [.lessOrEqual, .less, .equal].contains(comparison) ? relative : -relative
        return (inside >= 0 ? "+" : "") + Units.fixed(inside, decimals: 1) + "%"
    }
}
