import HarnessModel

/// The ranking table of a scenario: one row per strategy, best first by the scenario's ranking figure,
/// with that figure's "× best", spread and range, then peak heap and the other figures beside it.
/// Strategies whose every case failed come last, with what stopped them.
struct RankingTable {
    let scenario: ScenarioRun
    let summary: ScenarioSummary

    /// A column: its header, its alignment and its cell for a ranked strategy and for a failed one.
    private struct Column {
        var header: Phrase
        var numeric = true
        var ranked: (Int, StrategySummary) -> Phrase
        var failed: (String) -> Phrase = { _ in "–" }
    }

    /// The table: ranked strategies best first, then those whose every case failed.
    var table: Table {
        let columns = self.columns()
        var table = Table(columns: columns.map { Table.Column($0.header, $0.numeric ? .number : .text) })
        for (rank, strategy) in summary.ranked.enumerated() {
            table.rows.append(columns.map { $0.ranked(rank, strategy) })
        }
        for name in summary.failedStrategies {
            table.rows.append(columns.map { $0.failed(name) })
        }
        return table
    }

    /// What the table ranks by, in a sentence that leads it.
    var caption: Phrase {
        let figure: Phrase = summary.ranking == .peakAllocated ? "peak allocated" : FigureWords.label(summary.ranking)
        var text: Phrase = "Ranked by \(figure), median over repetitions; lower is better."
        if summary.ranking != .peakAllocated { text.append(" Peak allocated is shown beside it.") }
        return text
    }

    private var hasExact: Bool { summary.ranked.contains { $0.medianExactPeakNetBytes != nil } }

    private func columns() -> [Column] {
        var columns = [
            Column(header: "Rank", ranked: { rank, _ in .value(.count(rank + 1)) }),
            Column(
                header: "Strategy", numeric: false, ranked: { _, strategy in .code(strategy.strategy) },
                failed: { .code($0) }),
        ]
        columns += rankingColumns()
        if summary.ranking != .peakAllocated {
            columns.append(
                Column(
                    header: "Peak allocated",
                    ranked: {
                        .value(.bytesWithFloor($1.medianPeakAllocatedNetBytes, floorBytes: $1.peakUncertaintyBytes))
                    }))
        }
        if hasExact && summary.ranking != .exactPeak {
            columns.append(
                Column(
                    header: "Exact peak",
                    ranked: { _, strategy in
                        strategy.medianExactPeakNetBytes.map {
                            .value(.bytesWithFloor($0, floorBytes: strategy.exactPeakUncertaintyBytes))
                        } ?? "–"
                    }))
        }
        if hasExact {
            columns.append(Column(header: "Spike excess", ranked: { optionalBytes($1.medianSpikeExcessBytes) }))
        }
        if let phase = summary.ratePhase {
            let growth = { (name: String) -> Phrase in
                summary.growth(of: name).map { .value(.bytesPerSecond($0.bytesPerSecond)) } ?? "–"
            }
            columns.append(
                Column(header: "Growth in \(code: phase)", ranked: { growth($1.strategy) }, failed: { growth($0) }))
        }
        columns += [
            Column(header: "Peak resident", ranked: { bytes($1.medianPeakResidentBytes) }),
            Column(header: "Peak RSS (VmHWM)", ranked: { bytes($1.medianPeakRSSBytes) }),
            Column(header: "Residue", ranked: { bytes($1.medianResidueBytes) }),
            Column(
                header: "Duration",
                ranked: { .value(.duration(nanoseconds: Int64($1.medianDurationNanoseconds))) }),
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
        let header =
            summary.ranking == .peakAllocated ? "Peak allocated" : capitalized(FigureWords.label(summary.ranking))
        let value = { (value: Double?) -> Phrase in value.map { summary.rankingValue($0) } ?? "–" }
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
                    strategy.rankingMedian.map { median -> Phrase in
                        floor(strategy).map { .value(.bytesWithFloor(median, floorBytes: $0)) }
                            ?? summary.rankingValue(median)
                    } ?? "–"
                },
                failed: { name in
                    kills.first { $0.strategy == name && $0.killedCount == $0.caseCount }.map(KillWords.phrase)
                        ?? "failed"
                })
        ] + intervalColumn() + [
            Column(
                header: "× best",
                ranked: { summary.ratioToBest($1).map { .value(.ratio($0, decimals: 2)) } ?? "–" }),
            Column(
                header: "Spread",
                ranked: { $1.rankingSpreadPercent.map { .value(.plusMinusPercent($0 / 2, decimals: 1)) } ?? "–" }),
            Column(header: "Min – max", ranked: { "\(value($1.rankingMin)) – \(value($1.rankingMax))" }),
        ]
    }

    /// The 95% interval of the ranking figure's median, when some strategy ran 6 or more repetitions.
    private func intervalColumn() -> [Column] {
        guard summary.ranked.contains(where: { $0.rankingInterval != nil }) else { return [] }
        return [
            Column(
                header: "95% interval",
                ranked: { RepetitionsSection.cell($1.rankingInterval, format: { summary.rankingValue($0) }) })
        ]
    }

    private func bytes(_ value: Double) -> Phrase { .value(.bytes(value)) }
    private func optionalBytes(_ value: Double?) -> Phrase { value.map { .value(.bytes($0)) } ?? "–" }
    /// The label with its first word capitalized (a name in code stays as it is).
    private func capitalized(_ label: Phrase) -> Phrase {
        guard case .text(let first)? = label.spans.first else { return label }
        return Phrase([.text(first.prefix(1).uppercased() + first.dropFirst())] + label.spans.dropFirst())
    }
}
