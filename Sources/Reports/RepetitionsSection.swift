import HarnessModel

/// The noise of each strategy's median in report.md and summary.csv: the 95% interval of the median
/// (`MedianInterval`, with 6 or more completed repetitions) and, for `repetitions: auto`, why each
/// strategy stopped where it did.
public enum RepetitionsSection {
    /// The interval as a table cell: `±2.7% (12.03 MiB – 12.60 MiB)`; `–` when there is none.
    static func cell(_ interval: MedianInterval?, format: (Double) -> Phrase = { .value(.bytes($0)) }) -> Phrase {
        guard let interval else { return "–" }
        return "\(reach(interval)) (\(format(interval.lower)) – \(format(interval.upper)))"
    }

    /// How far the interval reaches from the median: `±2.7%`, `±0.0%`, or `±∞` around a zero median.
    static func reach(_ interval: MedianInterval) -> Value {
        .plusMinusPercent(interval.relativeReach * 100, decimals: 1)
    }

    /// How many repetitions ran: `3 repetitions`; for auto, the range over the strategies, `6–12 repetitions`.
    static func count(_ run: ScenarioRun) -> String {
        let (text, plural) = counts(run)
        return text + " repetition" + (plural ? "s" : "")
    }

    /// The count as a number or a range (`6–12`), and whether it reads as a plural.
    static func counts(_ run: ScenarioRun) -> (text: String, plural: Bool) {
        guard run.adaptiveRepetitions != nil else { return (String(run.repetitions), run.repetitions != 1) }
        let counts = run.strategies.map { strategy in run.cases.filter { $0.strategy == strategy }.count }
            .filter { $0 > 0 }
        let low = counts.min() ?? 0
        let high = counts.max() ?? 0
        return (low == high ? "\(low)" : "\(low)–\(high)", high != 1)
    }

    /// The scenario line's repetitions: `3 repetitions`, or for auto the counts the strategies ran and the rule.
    static func headline(_ run: ScenarioRun) -> Phrase {
        guard let rule = run.adaptiveRepetitions else { return Phrase(stringLiteral: count(run)) }
        return "repetitions: auto, \(counts(run).text) per strategy (until the 95% interval of the median is within "
            + "±\(Value.number(rule.target * 100, decimals: rule.target * 100 < 1 ? 1 : 0))%, "
            + "\(rule.minimum) to \(rule.maximum))"
    }

    /// `### Repetitions` for an auto scenario: per strategy and watched figure, the count, the median, its
    /// interval and why the strategy stopped; nil for a fixed count.
    static func section(for run: ScenarioRun) -> Section? {
        guard let rule = run.adaptiveRepetitions else { return nil }
        let watched = AdaptiveRepetitions.watchedFigures(of: run)
        let intro: Phrase =
            "Each strategy ran until the 95% interval of its median was within ±"
            + "\(Value.number(rule.target * 100, decimals: rule.target * 100 < 1 ? 1 : 0))% of it "
            + "(\(rule.minimum) to \(rule.maximum) repetitions). The interval is distribution-free: two of the "
            + "repetitions' own values, the k-th smallest and the k-th largest, with k the largest rank whose "
            + "binomial coverage of the median is at least 95%."
        var table = Table(columns: [
            .init("Strategy"), .init("Repetitions", .number), .init("Figure"), .init("Median", .number),
            .init("95% interval", .number), .init("Stopped"),
        ])
        for strategy in run.strategies {
            let results = run.cases.filter { $0.strategy == strategy }
            guard !results.isEmpty else { continue }
            let stopped = reason(rule.decision(for: results, watching: watched), rule: rule)
            for figure in watched {
                let values = ThresholdEvaluator.values(FigureReference(strategy: strategy, figure: figure), in: run)
                let format = { (value: Double) in Phrase(stringLiteral: figure.format(value)) }
                let median = Statistics.median(values).map(format) ?? "–"
                table.rows.append([
                    .code(strategy), .value(.count(results.count)), Phrase(stringLiteral: figure.label), median,
                    cell(MedianInterval(values), format: format), Phrase(stringLiteral: stopped),
                ])
            }
        }
        return Section(level: 3, heading: "Repetitions", blocks: [.paragraph(intro), .table(table)])
    }

    static func reason(_ decision: AdaptiveRepetitions.Decision, rule: AdaptiveRepetitions) -> String {
        switch decision {
        case .stop(.narrow): return "within the target"
        case .stop(.maximum): return "at the maximum (\(rule.maximum))"
        case .stop(.incomplete): return "a repetition did not complete"
        case .more: return "before the rule was met (the run was cut short)"
        }
    }

    /// The summary.csv columns of the medians and their intervals, present when some strategy has an interval.
    static let columns = [
        "peak_allocated_net_median_bytes", "peak_allocated_net_ci95_low_bytes", "peak_allocated_net_ci95_high_bytes",
    ]
    /// The same for exact peaks, present when some strategy has an interval of its exact peak.
    static let exactColumns = [
        "exact_peak_net_median_bytes", "exact_peak_net_ci95_low_bytes", "exact_peak_net_ci95_high_bytes",
    ]

    /// Per scenario and strategy, the cells of `columns` and `exactColumns` (the same on every row of a strategy).
    static func cells(_ report: RunReport) -> [String: [String: String]] {
        var cells: [String: [String: String]] = [:]
        for run in report.scenarios {
            for summary in ScenarioSummary(run).ranked {
                var row: [String: String] = [:]
                for (names, interval) in [
                    (columns, summary.peakAllocatedInterval), (exactColumns, summary.exactPeakInterval),
                ] {
                    guard let interval else { continue }
                    let values = [interval.median, interval.lower, interval.upper]
                    for (name, value) in zip(names, values) {
                        // A median of an even count can end in .5: kept, not rounded away.
                        row[name] = Units.fixed(value, decimals: value == value.rounded() ? 0 : 1)
                    }
                }
                cells["\(run.name)\u{1F}\(summary.strategy)"] = row
            }
        }
        return cells
    }
}
