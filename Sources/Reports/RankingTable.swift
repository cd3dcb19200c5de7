import HarnessModel

/// The ranking table of a scenario: one row per strategy, best first by the scenario's ranking figure,
/// with that figure's "× best", spread and range, then peak heap and the other figures beside it.
/// Strategies whose every case failed come last, with what stopped them.
struct RankingTable {
    let scenario: ScenarioRun
    let summary: ScenarioSummary

    /// A column: its header, its alignment and its cell for a ranked strategy and for a failed one.
    private struct Column {
        var header: String
        var numeric = true
        var ranked: (Int, StrategySummary) -> String
        var failed: (String) -> String = { _ in "–" }
    }

    /// The table's Markdown lines, a blank line after it.
    func lines() -> [String] {
        let columns = self.columns()
        var out = ["| " + columns.map(\.header).joined(separator: " | ") + " |"]
        out.append("|" + columns.map { $0.numeric ? "---:|" : "---|" }.joined())
        for (rank, strategy) in summary.ranked.enumerated() {
            out.append("| " + columns.map { $0.ranked(rank, strategy) }.joined(separator: " | ") + " |")
        }
        for name in summary.failedStrategies {
            out.append("| " + columns.map { $0.failed(name) }.joined(separator: " | ") + " |")
        }
        out.append("")
        return out
    }

    /// What the table ranks by, in a sentence that leads it.
    var caption: String {
        let figure = summary.ranking == .peakAllocated ? "peak allocated" : summary.rankingLabel
        var text = "Ranked by \(figure), median over repetitions; lower is better."
        if summary.ranking != .peakAllocated { text += " Peak allocated is shown beside it." }
        return text
    }

    private var hasExact: Bool { summary.ranked.contains { $0.medianExactPeakNetBytes != nil } }

    private func columns() -> [Column] {
        var columns = [
            Column(header: "Rank", ranked: { rank, _ in "\(rank + 1)" }),
            Column(
                header: "Strategy", numeric: false, ranked: { _, strategy in MarkdownReport.code(strategy.strategy) },
                failed: { MarkdownReport.code($0) }),
        ]
        columns += rankingColumns()
        if summary.ranking != .peakAllocated {
            columns.append(
                Column(
                    header: "Peak allocated",
                    ranked: { MarkdownReport.withFloor($1.medianPeakAllocatedNetBytes, $1.peakUncertaintyBytes) }))
        }
        if hasExact && summary.ranking != .exactPeak {
            columns.append(
                Column(
                    header: "Exact peak",
                    ranked: { _, strategy in
                        strategy.medianExactPeakNetBytes.map {
                            MarkdownReport.withFloor($0, strategy.exactPeakUncertaintyBytes)
                        } ?? "–"
                    }))
        }
        if hasExact {
            columns.append(Column(header: "Spike excess", ranked: { optionalBytes($1.medianSpikeExcessBytes) }))
        }
        if let phase = summary.ratePhase {
            let growth = { (name: String) in summary.growth(of: name)?.formatted ?? "–" }
            columns.append(
                Column(header: "Growth in `\(phase)`", ranked: { growth($1.strategy) }, failed: { growth($0) }))
        }
        columns += [
            Column(header: "Peak resident", ranked: { bytes($1.medianPeakResidentBytes) }),
            Column(header: "Peak RSS (VmHWM)", ranked: { bytes($1.medianPeakRSSBytes) }),
            Column(header: "Residue", ranked: { bytes($1.medianResidueBytes) }),
            Column(
                header: "Duration",
                ranked: { Units.formatDuration(nanoseconds: Int64($1.medianDurationNanoseconds)) }),
            Column(
                header: "Cases ok", ranked: { "\($1.okCount)/\($1.okCount + $1.failedCount)" },
                failed: { name in "0/\(scenario.cases.filter { $0.strategy == name }.count)" }),
        ]
        return columns
    }

    /// The ranking figure, its ratio to the best, its spread and range; a failed strategy's first cell
    /// says what stopped it.
    private func rankingColumns() -> [Column] {
        let kills = scenario.memoryLimitKills
        let header = summary.ranking == .peakAllocated ? "Peak allocated" : "\(capitalized(summary.rankingLabel))"
        let value = { (value: Double?) in value.map { summary.formatRanking($0) } ?? "–" }
        // A peak the harness measured itself carries its measurement floor (± the harness's own bytes).
        let floor = { (strategy: StrategySummary) -> Int? in
            switch summary.ranking {
            case .peakAllocated: return strategy.peakUncertaintyBytes
            case .exactPeak: return strategy.exactPeakUncertaintyBytes
            default: return nil
            }
        }
        return [
            Column(
                header: header,
                ranked: { _, strategy in
                    strategy.rankingMedian.map { median in
                        floor(strategy).map { MarkdownReport.withFloor(median, $0) } ?? summary.formatRanking(median)
                    } ?? "–"
                },
                failed: { name in
                    kills.first { $0.strategy == name && $0.killedCount == $0.caseCount }.map(\.description)
                        ?? "failed"
                })
        ] + intervalColumn() + [
            Column(
                header: "× best",
                ranked: { summary.ratioToBest($1).map { Units.fixed($0, decimals: 2) + "x" } ?? "–" }),
            Column(
                header: "Spread",
                ranked: { $1.rankingSpreadPercent.map { "±" + Units.fixed($0 / 2, decimals: 1) + "%" } ?? "–" }),
            Column(header: "Min – max", ranked: { "\(value($1.rankingMin)) – \(value($1.rankingMax))" }),
        ]
    }

    /// The 95% interval of the ranking figure's median, when some strategy ran 6 or more repetitions.
    private func intervalColumn() -> [Column] {
        guard summary.ranked.contains(where: { $0.rankingInterval != nil }) else { return [] }
        return [
            Column(
                header: "95% interval",
                ranked: { RepetitionsSection.cell($1.rankingInterval, format: { summary.formatRanking($0) }) })
        ]
    }

    private func bytes(_ value: Double) -> String { Units.formatBytes(value) }
    private func optionalBytes(_ value: Double?) -> String { value.map { Units.formatBytes($0) } ?? "–" }
    private func capitalized(_ label: String) -> String { label.prefix(1).uppercased() + label.dropFirst() }
}
