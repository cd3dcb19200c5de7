import HarnessModel
import Verdicts

/// The words of a run's checks: each typed `Check` becomes the record's `CheckResult` (what the check table, JUnit,
/// the JSON summary and GitHub annotations print).
public enum CheckWording {
    /// Every check, worded, in order.
    public static func results(_ checks: [Check]) -> [CheckResult] { checks.map(result) }

    /// One check, worded.
    public static func result(_ check: Check) -> CheckResult {
        switch check.judgement {
        case .threshold(let threshold): return result(threshold, scenario: check.scenario)
        case .baseline(let baseline): return result(baseline, scenario: check.scenario, strategy: check.strategy)
        case .leak(let summary): return result(summary, scenario: check.scenario)
        }
    }

    // MARK: Thresholds

    static func result(_ judgement: ThresholdJudgement, scenario: String) -> CheckResult {
        let threshold = judgement.threshold
        let figure = threshold.subject.figure
        func format(_ value: Double, _ figure: Figure) -> String { figure.format(value, unit: judgement.unit) }
        func result(passed: Bool, actual: String, limit: String, margin: String, message: String, spread: Double? = nil)
            -> CheckResult
        {
            CheckResult(
                kind: .threshold, scenario: scenario, strategy: threshold.subject.strategy, name: threshold.text,
                passed: passed, actual: actual, limit: limit, margin: margin, message: message, spreadPercent: spread,
                file: threshold.file, line: threshold.line, column: threshold.column)
        }
        guard let median = judgement.median else {
            return result(
                passed: false, actual: "–", limit: "–", margin: "–",
                message: "\(threshold.subject) has no value: no completed case of `\(threshold.subject.strategy)` "
                    + "reports \(figure)")
        }
        let limitText: String
        switch threshold.limit {
        case .absolute(let value):
            limitText = format(value, figure)
        case .relative(let factor, let other):
            guard let base = judgement.baseMedian else {
                return result(
                    passed: false, actual: format(median, figure), limit: "–", margin: "–",
                    message: "\(other) has no value: no completed case of `\(other.strategy)` reports \(other.figure)")
            }
            limitText =
                "\(format(factor * base, figure)) "
                + "(\(Units.fixed(factor, decimals: factor == factor.rounded() ? 0 : 2)) × \(other) = "
                + "\(format(base, other.figure)))"
        }
        let margin = margin(
            median, limit: judgement.limit ?? 0, comparison: threshold.comparison, formatted: format(median, figure))
        let message =
            judgement.passed
            ? "\(threshold.subject) = \(format(median, figure)) \(threshold.comparison.rawValue) \(limitText)"
            : "\(threshold.subject) = \(format(median, figure)) breaks `\(threshold.text)` (limit "
                + "\(limitText), off by \(margin)); see the `\(scenario)` section of report.md and "
                + "\(threshold.file):\(threshold.line)"
        return result(
            passed: judgement.passed, actual: format(median, figure),
            limit: "\(threshold.comparison.rawValue) \(limitText)", margin: margin, message: message,
            spread: judgement.spreadPercent)
    }

    /// How far inside (+) or outside (−) the limit `value` is, in percent of the limit; with a limit of 0,
    /// "0" or the value itself (`formatted`).
    static func margin(_ value: Double, limit: Double, comparison: Comparison, formatted: String) -> String {
        guard limit != 0 else { return value == 0 ? "0" : formatted }
        let relative = (limit - value) / abs(limit) * 100
        let inside = [.lessOrEqual, .less, .equal].contains(comparison) ? relative : -relative
        return (inside >= 0 ? "+" : "") + Units.fixed(inside, decimals: 1) + "%"
    }

    // MARK: Baselines

    static func result(_ judgement: BaselineJudgement, scenario: String, strategy: String) -> CheckResult {
        let comparison = judgement.comparison
        let figure = judgement.figure
        let floor = "floor \(Units.formatBytes(comparison.floorBytes))"
        return CheckResult(
            kind: .baseline, scenario: scenario, strategy: strategy, name: "\(strategy).\(figure) vs baseline",
            passed: judgement.passed, actual: figure.format(comparison.new),
            limit: "\(figure.format(comparison.old)) \(band(comparison))\(comparison.noise == nil ? "" : " noise") "
                + "(\(floor))",
            margin: margin(comparison, figure, failOnImprovement: judgement.failOnImprovement),
            message:
                "\(scenario) / \(strategy).\(figure) \(comparison.verdict.rawValue): \(figure.format(comparison.old))"
                + " → \(figure.format(comparison.new)), \(explanation(comparison, figure)); against "
                + judgement.baselineFile,
            spreadPercent: comparison.spreadPercent)
    }

    /// How far inside (+) or outside (−) its band the figure the verdict reads lies, in percent of the band's edge,
    /// as a threshold's margin: the new median's interval's lower end (the median without one) against the upper
    /// edge, the larger of old × (1 + tolerance) and old + floor; with `failOnImprovement`, a figure that fell is
    /// held against the lower edge the same way.
    static func margin(_ comparison: BaselineComparison, _ figure: Figure, failOnImprovement: Bool) -> String {
        let change = comparison.change
        if failOnImprovement && change.change < 0 {
            let read = comparison.interval?.upper ?? comparison.new
            let lower = min(change.before - change.band, change.before - change.floor)
            return margin(read, limit: lower, comparison: .greaterOrEqual, formatted: figure.format(read))
        }
        let read = comparison.interval?.lower ?? comparison.new
        let upper = max(change.before + change.band, change.before + change.floor)
        return margin(read, limit: upper, comparison: .lessOrEqual, formatted: figure.format(read))
    }

    /// Why: `+7.9% (+3.2 MiB) above the baseline, outside its noise of ±2.1% (measured over 15 repetitions;
    /// the new median's 95% interval: +6.0% … +9.1%)`.
    static func explanation(_ comparison: BaselineComparison, _ figure: Figure) -> String {
        let change = comparison.change
        let old = comparison.old
        let amount =
            "\(percent(change.relativeChange)) (\(change.change >= 0 ? "+" : "")\(figure.format(change.change)))"
        let side = change.change > 0 ? " above the baseline" : change.change < 0 ? " below the baseline" : ""
        if !change.beyondFloor {
            return "\(amount)\(side), within the floor of \(Units.formatBytes(comparison.floorBytes))"
        }
        let band = comparison.noise == nil ? "the tolerance of \(band(comparison))" : "its noise of \(band(comparison))"
        var details: [String] = []
        if let noise = comparison.noise { details.append("measured over \(noise.repetitions) repetitions") }
        // Relative to a zero baseline the interval's ends say nothing.
        if let interval = comparison.interval, old != 0 {
            details.append(
                "the new median's 95% interval: \(percent((interval.lower - old) / abs(old))) … "
                    + "\(percent((interval.upper - old) / abs(old)))")
        }
        let said = details.isEmpty ? "" : " (" + details.joined(separator: "; ") + ")"
        return "\(amount)\(side), \(change.outsideBand ? "outside" : "within") \(band)\(said)"
    }

    /// The band as text: `±10%` for a flat tolerance, `±2.1%` for a derived one.
    static func band(_ comparison: BaselineComparison) -> String {
        let percent = comparison.tolerance * 100
        let whole = comparison.noise == nil && percent == percent.rounded()
        return "±" + Units.fixed(percent, decimals: whole ? 0 : 1) + "%"
    }

    static func percent(_ fraction: Double) -> String {
        guard fraction.isFinite else { return "new" }
        return (fraction >= 0 ? "+" : "") + Units.fixed(fraction * 100, decimals: 1) + "%"
    }

    // MARK: Leaks

    static func result(_ summary: StrategyLeakSummary, scenario: String) -> CheckResult {
        let expected = summary.expectation?.rawValue ?? "leak-free"
        let name = "\(summary.strategy): expected \(expected)"
        guard summary.verdict != .notAssessed else {
            return CheckResult(
                kind: .leak, scenario: scenario, strategy: summary.strategy, name: name, passed: false,
                actual: "not assessed", limit: "expect \(expected)", margin: summary.outcome.rawValue,
                message:
                    "\(scenario) / \(summary.strategy) is declared `expect: \(expected)` but could not be assessed "
                    + "(\(LeakWording.reasons(summary.judgement))); track its objects (context.track), add a repeat "
                    + "step, or see the heap graph's failure in report.md")
        }
        let actual = leakFigures(summary)
        let message: String
        switch summary.outcome {
        case .unexpectedLeak:
            message =
                "\(scenario) / \(summary.strategy) leaks ("
                + (summary.assessedRepetitions == 0
                    ? "" : "\(summary.leakingRepetitions) of \(summary.assessedRepetitions) repetitions: ")
                + LeakWording.reasons(summary.judgement)
                + "); it is expected to be leak-free. See the Leaks section of `\(scenario)` in report.md"
        case .expectedLeakNotSeen:
            message =
                "\(scenario) / \(summary.strategy) is declared `expect: leaks` but showed none: the scenario "
                + "may no longer show the pitfall"
        case .asExpected, .notAssessed:
            message = "\(scenario) / \(summary.strategy): \(summary.verdict.rawValue), as expected"
        }
        return CheckResult(
            kind: .leak, scenario: scenario, strategy: summary.strategy, name: name,
            passed: summary.outcome != .unexpectedLeak,
            actual: summary.verdict.rawValue + (actual.isEmpty ? "" : " (\(actual))"), limit: "expect \(expected)",
            margin: summary.outcome.rawValue, message: message)
    }

    /// `survivors: ProfileScreen 20; growth 80.00 KiB ± 12 B/iteration; 60 blocks (1.27 MiB) no root reaches`.
    static func leakFigures(_ summary: StrategyLeakSummary) -> String {
        let survivors = summary.survivors.map {
            "\($0.typeName) \($0.minimum == $0.maximum ? "\($0.minimum)" : "\($0.minimum)–\($0.maximum)")"
        }
        .joined(separator: ", ")
        let growth = summary.growth.map {
            "\(Units.formatBytes($0.medianSlopeBytesPerIteration)) ± "
                + "\(Units.formatBytes($0.medianBoundBytesPerIteration))/iteration"
        }
        .joined(separator: ", ")
        return [
            survivors.isEmpty ? nil : "survivors: \(survivors)", growth.isEmpty ? nil : "growth \(growth)",
            summary.heap.map(LeakWording.unreachable),
        ]
        .compactMap { $0 }.joined(separator: "; ")
    }
}
