import HarnessModel

/// The run's record → its document: per scenario, strategies ranked by median peak allocated, with a plain-language
/// reading, per-phase peaks, the charts, leaks, where the memory is and why it is kept, scenario metrics and
/// failures; then the environment. A pure function: the same record gives the same document.
public enum ReportBuilder {
    /// The document of `report` and its `checks`. `files`: the figure files to keep (nil: all of them).
    public static func document(
        _ report: RunReport, checks: [CheckResult] = [], files: Set<String>? = nil, scale: ValueScale? = nil
    ) -> ReportDocument {
        var blocks: [Block] = []
        let cases = report.scenarios.flatMap(\.cases)
        let failed = cases.filter { $0.status != .ok }.count
        let instrumented = report.scenarios.flatMap(\.instrumentedCases).count
        blocks.append(
            .paragraph(
                "Generated \(report.generatedAt) by memharness \(report.environment.toolVersion) · "
                    + "\(report.scenarios.count) scenario\(report.scenarios.count == 1 ? "" : "s"), "
                    + "\(cases.count) case\(cases.count == 1 ? "" : "s") (\(cases.count - failed) ok, \(failed) not ok)"
                    + (instrumented == 0
                        ? "."
                        : " and \(instrumented) instrumented (allocation stacks or heap captures; their figures are "
                            + "not measurements: instrumented.csv)."))
        )
        // Records that measured the floor read the live heap; older ones `stats.allocated`.
        blocks.append(
            .paragraph(
                cases.contains { $0.measurements?.floor != nil }
                    ? "Peak allocated is the live heap (jemalloc's \(code: "stats.allocated") without the freed blocks "
                        + "thread caches hold) at its highest reading minus the baseline the case started from (what "
                        + "the scenario itself added), median over repetitions, ± its measurement floor. Lower is better."
                    : "Peak allocated is jemalloc's \(code: "stats.allocated") at its highest sample minus the baseline "
                        + "the case started from (what the scenario itself added), median over repetitions. Lower is "
                        + "better."))
        if report.scenarios.count > 1 {
            var table = Table(columns: [.init("Scenario"), .init("Reading")])
            for scenario in report.scenarios {
                table.rows.append([
                    Phrase([.link(Phrase(stringLiteral: scenario.name), .section(heading: scenario.name))]),
                    ScenarioSummary(scenario).readingPhrase,
                ])
            }
            blocks.append(.table(table))
        }
        if let checks = CheckOutputs.section(checks, title: CheckWords.title) { blocks.append(.section(checks)) }
        for sweep in report.sweeps ?? [] { blocks.append(.section(SweepSection.section(sweep))) }
        for (index, scenario) in report.scenarios.enumerated() {
            blocks.append(.section(section(for: scenario, index: index, files: files, scale: scale)))
        }
        blocks.append(.section(environment(report, cases: cases)))
        return ReportDocument(title: "memharness report", blocks: blocks)
    }

    static func section(for scenario: ScenarioRun, index: Int, files: Set<String>?, scale: ValueScale?) -> Section {
        let summary = ScenarioSummary(scenario)
        var blocks = heading(scenario)
        blocks.append(
            .paragraph(
                "\(strong: "Reading:") \(summary.readingPhrase)"
                    + (summary.rateReadingPhrase.map { " " + $0 } ?? Phrase())))
        let table = RankingTable(scenario: scenario, summary: summary)
        blocks += [.paragraph(table.caption), .table(table.table), .paragraph(rankingNote(summary))]
        blocks += [RepetitionsSection.section(for: scenario), ProgramNotes.section(for: scenario)]
            .compactMap { $0.map(Block.section) }
        if summary.ranked.contains(where: { $0.peakUncertaintyBytes != nil }) { blocks.append(.paragraph(floorNote)) }
        if summary.ranked.contains(where: { $0.medianExactPeakNetBytes != nil }) {
            blocks.append(.paragraph(exactNote))
        }
        blocks += ChartBuilder.charts(scenario, scale: scale).filter { files?.contains($0.file ?? "") ?? true }
            .map(Block.figure)
        blocks += [
            phaseTable("Peak allocated per phase", summary.ranked, \.phasePeakNetBytes),
            phaseTable("Exact peak per phase", summary.ranked, \.phaseExactPeakNetBytes),
            PhaseTimeSection.section(for: scenario), PerRequestSection.section(summary),
            ResidentSection.section(for: scenario),
            LeaksSection.section(for: scenario), AttributionSection.section(for: scenario, files: files),
            HeapGraphFiles.section(for: scenario, files: files), PeakRetainersSection.section(for: scenario),
            metricsTable(summary), notCompletedTable(scenario),
        ].compactMap { $0.map(Block.section) }
        return Section(level: 2, heading: Phrase(stringLiteral: scenario.name), blocks: blocks, scenario: index)
    }

    /// The scenario's description, workload, file, repetitions, steps and parameters.
    static func heading(_ scenario: ScenarioRun) -> [Block] {
        var out: [Block] = []
        if !scenario.summary.isEmpty { out.append(.paragraph(Phrase(typed: scenario.summary))) }
        let steps = Phrase.joined(scenario.steps.map { .code($0) }, separator: " → ")
        out.append(
            .paragraph(
                "Workload \(code: scenario.workload) · file \(code: scenario.file) · "
                    + "\(RepetitionsSection.headline(scenario)) · steps: \(steps)"))
        if !scenario.parameters.isEmpty {
            let parameters = scenario.parameters.map { "\(code: $0.name) = \(String(describing: $0.value))" as Phrase }
            out.append(.paragraph("Parameters: " + Phrase.joined(parameters, separator: ", ") + "."))
        }
        return out
    }

    /// What the ranking table's spread and interval columns mean.
    static func rankingNote(_ summary: ScenarioSummary) -> Phrase {
        let intervals = summary.ranked.contains { $0.rankingInterval != nil }
        return "Spread is half the range of the repetitions' ranking figure relative to its median; peak resident and "
            + "RSS are absolute (they include the harness itself)."
            + (intervals
                ? " The 95% interval holds the true median with at least 95% confidence whatever the noise's "
                    + "distribution: two of the repetitions' own values (order statistics), with 6 or more "
                    + "repetitions." : "")
    }

    /// The median of each scenario metric per strategy, but those a section of their own shows (per request, the
    /// resident set explained); nil when there is none.
    static func metricsTable(_ summary: ScenarioSummary) -> Section? {
        let shown = PerRequestSection.shownNames(summary).union(ResidentBreakdown.metricNames)
        let metricNames = summary.ranked.flatMap { $0.metrics.map(\.name) }.uniqued().filter { !shown.contains($0) }
        guard !metricNames.isEmpty else { return nil }
        let units = Dictionary(
            summary.ranked.flatMap(\.metrics).map { ($0.name, $0.unit) }, uniquingKeysWith: { first, _ in first })
        var table = Table(
            columns: [.init("Strategy")]
                + metricNames.map { .init("\($0)\(MarkdownReport.unitLabel(units[$0]))", .number) })
        for strategy in summary.ranked {
            let values = metricNames.map { name -> Phrase in
                strategy.metrics.first { $0.name == name }.map { Phrase(stringLiteral: MarkdownReport.format($0)) }
                    ?? "–"
            }
            table.rows.append([.code(strategy.strategy)] + values)
        }
        return Section(level: 3, heading: "Scenario metrics (median)", blocks: [.table(table)])
    }

    /// The cases that did not complete, with why; nil when all did.
    static func notCompletedTable(_ scenario: ScenarioRun) -> Section? {
        let notOK = scenario.cases.filter { $0.status != .ok }
        guard !notOK.isEmpty else { return nil }
        var table = Table(columns: [.init("Strategy"), .init("Repetition", .number), .init("Status"), .init("Reason")])
        for result in notOK {
            table.rows.append([
                .code(result.strategy), .value(.count(result.repetition)),
                Phrase(stringLiteral: result.status.rawValue),
                Phrase(stringLiteral: result.failureText ?? ""),
            ])
        }
        return Section(level: 3, heading: "Cases that did not complete", blocks: [.table(table)])
    }

    /// A table of one figure per phase and strategy: every strategy's phases, in the order they first appear (the
    /// strategies of a server scenario each have steps of their own); nil when none has any.
    static func phaseTable(
        _ title: Phrase, _ ranked: [StrategySummary], _ figure: KeyPath<StrategySummary, [PhaseFigure]>
    ) -> Section? {
        let phases = ranked.flatMap { $0[keyPath: figure].map(\.name) }.uniqued()
        guard !phases.isEmpty else { return nil }
        var table = Table(columns: [.init("Strategy")] + phases.map { .init(.code($0), .number) })
        for strategy in ranked {
            let values = phases.map { phase -> Phrase in
                strategy[keyPath: figure].first { $0.name == phase }.map {
                    .value(.bytesWithFloor($0.bytes, floorBytes: $0.uncertaintyBytes))
                } ?? "–"
            }
            table.rows.append([.code(strategy.strategy)] + values)
        }
        return Section(level: 3, heading: title, blocks: [.table(table)])
    }

    /// What ± after a peak means.
    static let floorNote: Phrase =
        "± after a peak is its measurement floor, the largest of the repetitions: what the harness itself allocated "
        + "after the baseline, plus, for sampled peaks, how far two back-to-back readings of the live heap disagreed "
        + "where the peak was read (a thread cache filling or flushing while jemalloc summed the caches). A peak "
        + "without one had a floor of 0 B: the harness allocated nothing after the baseline and the readings agreed."

    /// What the exact columns are (the reading names the strategy whose spikes the sampler missed most).
    static let exactNote: Phrase =
        "Exact peak counts every allocation (\(code: "--peak exact"): every malloc and free moves one counter of live "
        + "size-class bytes); spike excess is the exact peak minus the sampled one: what fell between the "
        + "samples (the reading names the strategy whose peak the sampler missed most)."
}
