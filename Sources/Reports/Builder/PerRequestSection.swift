import HarnessModel

/// "Per request": for each load step of each server strategy, what a request cost (median over the strategy's
/// completed cases): the requests answered, the allocation calls and bytes per request, the live growth per 1,000
/// requests with its 95% interval, the peak per concurrent request, the latencies and the errors. The figures are the
/// step's metrics, read back by name (`LoadFigures.metricName`: the phase's name before them, none for `load`); the
/// scenario's metrics table leaves them out.
enum PerRequestSection {
    /// The columns, by the metric's base name.
    static let columns: [(base: String, label: Phrase)] = [
        ("requests", "Requests"), ("allocationsPerRequest", "Allocations per request"),
        ("bytesPerRequest", "Bytes per request"), ("liveGrowthPer1000Requests", "Live growth per 1,000 requests"),
        ("peakPerConcurrentRequest", "Peak per concurrent request"), ("latencyP50", "Latency p50 (ms)"),
        ("latencyP99", "Latency p99 (ms)"), ("requestErrors", "Errors"),
    ]
    static let intervalBases = ["liveGrowthPer1000RequestsLow", "liveGrowthPer1000RequestsHigh"]

    /// The load steps of a strategy: the phases whose per-request figures its metrics hold, in their order.
    static func phases(_ strategy: StrategySummary) -> [String] {
        let base = "allocationsPerRequest"
        return strategy.metrics.compactMap { metric -> String? in
            if metric.name == base { return "load" }
            let suffix = base.prefix(1).uppercased() + base.dropFirst()
            guard metric.name.hasSuffix(suffix), metric.name.count > suffix.count else { return nil }
            let phase = String(metric.name.dropLast(suffix.count))
            return LoadFigures.metricName(base, phase: phase) == metric.name ? phase : nil
        }
    }

    /// The section; nil when no strategy has a load step with per-request figures.
    static func section(_ summary: ScenarioSummary) -> Section? {
        var table = Table(columns: [.init("Strategy"), .init("Step")] + columns.map { .init($0.label, .number) })
        for strategy in summary.ranked {
            for phase in phases(strategy) {
                let metric = { (base: String) in
                    strategy.metrics.first { $0.name == LoadFigures.metricName(base, phase: phase) }
                }
                let cells = columns.map { column -> Phrase in
                    guard let value = metric(column.base) else { return "–" }
                    var text = MarkdownReport.format(value)
                    if column.base == "liveGrowthPer1000Requests" {
                        // One measured round gives a slope through two readings: its warm-up's growth, if it had none.
                        if let low = metric(intervalBases[0]), let high = metric(intervalBases[1]) {
                            text += " (95%: \(MarkdownReport.format(low)) to \(MarkdownReport.format(high)))"
                        } else {
                            text += " (one round: no interval)"
                        }
                    }
                    return Phrase(stringLiteral: text)
                }
                table.rows.append([.code(strategy.strategy), .code(phase)] + cells)
            }
        }
        guard !table.rows.isEmpty else { return nil }
        return Section(level: 3, heading: "Per request (median)", blocks: [.paragraph(note), .table(table)])
    }

    static let note: Phrase =
        "Each load step of a server, over its measured rounds (after its warm-up): allocation calls and bytes per "
        + "request are the agent's exact counts (the least of the rounds: noise only adds), live growth per 1,000 "
        + "requests the Theil–Sen slope of the live bytes after each round (the median of the slopes between every "
        + "two rounds, so a one-off step such as a lazily built cache is not read as growth; with Sen's 95% interval "
        + "from two measured rounds on), and the peak per concurrent request the highest live bytes a round reached "
        + "above its start, over the step's connections."

    /// The metric names the section shows, for the scenario's metrics table to leave out.
    static func shownNames(_ summary: ScenarioSummary) -> Set<String> {
        Set(
            summary.ranked.flatMap { strategy in
                phases(strategy).flatMap { phase in
                    (columns.map(\.base) + intervalBases).map { LoadFigures.metricName($0, phase: phase) }
                }
            })
    }
}
