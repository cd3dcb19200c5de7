import HarnessModel

/// Writes `report.md`: per scenario, strategies ranked by median peak allocated, with a plain-language
/// reading, per-phase peaks, scenario metrics and failures; then the environment.
public enum MarkdownReport {
    /// Renders the whole report. Deterministic: same input, same text.
    /// - Parameter charts: relative paths of the chart files written beside the report; those present are embedded.
    /// - Parameter checks: thresholds, baseline comparisons and leak expectations evaluated on this run.
    public static func render(_ report: RunReport, charts: Set<String> = [], checks: [CheckResult] = []) -> String {
        var out: [String] = []
        let cases = report.scenarios.flatMap(\.cases)
        let failed = cases.filter { $0.status != .ok }.count
        let instrumented = report.scenarios.flatMap(\.instrumentedCases)
        out.append("# memharness report")
        out.append("")
        out.append(
            "Generated \(report.generatedAt) by memharness \(report.environment.toolVersion) · "
                + "\(report.scenarios.count) scenario\(report.scenarios.count == 1 ? "" : "s"), "
                + "\(cases.count) case\(cases.count == 1 ? "" : "s") (\(cases.count - failed) ok, \(failed) not ok)"
                + (instrumented.isEmpty
                    ? "."
                    : " and \(instrumented.count) instrumented (allocation stacks or heap captures; their figures are "
                        + "not measurements: instrumented.csv)."))
        out.append("")
        // Records that measured the floor read the live heap; older ones `stats.allocated`.
        out.append(
            cases.contains { $0.measurements?.floor != nil }
                ? "Peak allocated is the live heap (jemalloc's `stats.allocated` without the freed blocks thread "
                    + "caches hold) at its highest reading minus the baseline the case started from (what the "
                    + "scenario itself added), median over repetitions, ± its measurement floor. Lower is better."
                : "Peak allocated is jemalloc's `stats.allocated` at its highest sample minus the baseline the case "
                    + "started from (what the scenario itself added), median over repetitions. Lower is better.")
        out.append("")
        if report.scenarios.count > 1 {
            out.append("| Scenario | Reading |")
            out.append("|---|---|")
            for scenario in report.scenarios {
                out.append(
                    "| [\(cell(scenario.name))](#\(anchor(scenario.name))) | "
                        + "\(cell(ScenarioSummary(scenario).reading)) |"
                )
            }
            out.append("")
        }
        if !checks.isEmpty {
            out.append(CheckOutputs.markdown(checks, title: "Checks"))
        }
        if let sweeps = report.sweeps, !sweeps.isEmpty {
            out.append(SweepSection.markdown(sweeps))
        }
        for scenario in report.scenarios {
            out.append(contentsOf: section(for: scenario, charts: charts))
        }
        out.append(contentsOf: environment(report.environment, cases: cases))
        out.append(contentsOf: timeTable(report))
        return out.joined(separator: "\n") + "\n"
    }

    static func section(for scenario: ScenarioRun, charts: Set<String>) -> [String] {
        let summary = ScenarioSummary(scenario)
        var out = heading(scenario)
        out.append("**Reading:** \(summary.reading)" + (summary.rateReading.map { " " + $0 } ?? ""))
        out.append("")
        out.append(contentsOf: ranking(scenario, summary))
        out.append(contentsOf: RepetitionsSection.lines(for: scenario))
        out.append(contentsOf: ProgramNotes.lines(for: scenario))
        if summary.ranked.contains(where: { $0.peakUncertaintyBytes != nil }) {
            out.append(floorNote)
            out.append("")
        }
        if summary.ranked.contains(where: { $0.medianExactPeakNetBytes != nil }) {
            out.append(contentsOf: exactNote)
        }
        out.append(contentsOf: chartLinks(scenario, summary, charts: charts))
        out.append(contentsOf: phaseTable("Peak allocated per phase", summary.ranked, \.phasePeakNetBytes))
        out.append(contentsOf: phaseTable("Exact peak per phase", summary.ranked, \.phaseExactPeakNetBytes))
        out.append(contentsOf: LeaksSection.lines(for: scenario, headingLevel: 3))
        out.append(contentsOf: AttributionSection.lines(for: scenario, files: charts))
        out.append(contentsOf: HeapGraphFiles.lines(for: scenario))
        out.append(contentsOf: PeakRetainersSection.lines(for: scenario))
        out.append(contentsOf: metricsTable(summary))
        out.append(contentsOf: notCompletedTable(scenario))
        return out
    }

    /// The scenario's heading, its description, workload, file, repetitions, steps and parameters.
    static func heading(_ scenario: ScenarioRun) -> [String] {
        var out = ["## \(scenario.name)", ""]
        if !scenario.summary.isEmpty {
            out.append(scenario.summary)
            out.append("")
        }
        out.append(
            "Workload \(code(scenario.workload, inTable: false)) · file \(code(scenario.file, inTable: false)) · "
                + "\(RepetitionsSection.headline(scenario)) · "
                + "steps: \(scenario.steps.map { code($0, inTable: false) }.joined(separator: " → "))")
        out.append("")
        if !scenario.parameters.isEmpty {
            out.append(
                "Parameters: "
                    + scenario.parameters.map { "\(code($0.name, inTable: false)) = \($0.value)" }.joined(
                        separator: ", ")
                    + ".")
            out.append("")
        }
        return out
    }

    /// The ranking table with its caption and what its spread and interval columns mean.
    static func ranking(_ scenario: ScenarioRun, _ summary: ScenarioSummary) -> [String] {
        let table = RankingTable(scenario: scenario, summary: summary)
        var out = [table.caption, ""]
        out.append(contentsOf: table.lines())
        let intervals = summary.ranked.contains { $0.rankingInterval != nil }
        out.append(
            "Spread is half the range of the repetitions' ranking figure relative to its median; peak resident and RSS "
                + "are absolute (they include the harness itself)."
                + (intervals
                    ? " The 95% interval holds the true median with at least 95% confidence whatever the noise's "
                        + "distribution: two of the repetitions' own values (order statistics), with 6 or more "
                        + "repetitions."
                    : ""))
        out.append("")
        return out
    }

    /// Links to the scenario's charts that were written beside the report.
    static func chartLinks(_ scenario: ScenarioRun, _ summary: ScenarioSummary, charts: Set<String>) -> [String] {
        let stem = ReportBundle.chartStem(scenario.name)
        let kinds = [
            ("timeline", "allocated over time"), ("peaks", "\(summary.rankingTitle) by strategy"),
            ("gauges", "gauges over time"),
        ]
        var out: [String] = []
        for (suffix, alt) in kinds {
            let path = "charts/\(stem)-\(suffix).svg"
            if charts.contains(path) {
                out.append("![\(scenario.name): \(alt)](\(path))")
                out.append("")
            }
        }
        return out
    }

    /// The median of each scenario metric per strategy; nothing when the workload reports none.
    static func metricsTable(_ summary: ScenarioSummary) -> [String] {
        let metricNames = summary.ranked.flatMap { $0.metrics.map(\.name) }.uniqued()
        guard !metricNames.isEmpty else { return [] }
        var out = ["### Scenario metrics (median)", ""]
        let units = Dictionary(
            summary.ranked.flatMap(\.metrics).map { ($0.name, $0.unit) }, uniquingKeysWith: { first, _ in first })
        out.append(
            "| Strategy | "
                + metricNames.map { name in "\(cell(name))\(unitLabel(units[name]))" }.joined(separator: " | ")
                + " |")
        out.append("|---|" + String(repeating: "---:|", count: metricNames.count))
        for strategy in summary.ranked {
            let values = metricNames.map { name in strategy.metrics.first { $0.name == name }.map(format) ?? "–" }
            out.append("| \(code(strategy.strategy)) | " + values.joined(separator: " | ") + " |")
        }
        out.append("")
        return out
    }

    /// The cases that did not complete, with why; nothing when all did.
    static func notCompletedTable(_ scenario: ScenarioRun) -> [String] {
        let notOK = scenario.cases.filter { $0.status != .ok }
        guard !notOK.isEmpty else { return [] }
        var out = ["### Cases that did not complete", ""]
        out.append("| Strategy | Repetition | Status | Reason |")
        out.append("|---|---:|---|---|")
        for result in notOK {
            out.append(
                "| \(code(result.strategy)) | \(result.repetition) | \(result.status.rawValue) | "
                    + "\(cell(result.failure ?? "")) |")
        }
        out.append("")
        return out
    }

    /// A table of one figure per phase and strategy (phases of the first strategy that has any); nothing when none has.
    static func phaseTable(
        _ title: String, _ ranked: [StrategySummary],
        _ figure: KeyPath<StrategySummary, [PhaseFigure]>
    ) -> [String] {
        guard let phases = ranked.first(where: { !$0[keyPath: figure].isEmpty })?[keyPath: figure].map(\.name) else {
            return []
        }
        var out = ["### \(title)", ""]
        out.append("| Strategy | " + phases.map { code($0) }.joined(separator: " | ") + " |")
        out.append("|---|" + String(repeating: "---:|", count: phases.count))
        for strategy in ranked {
            let values = phases.map { phase in
                strategy[keyPath: figure].first { $0.name == phase }.map { withFloor($0.bytes, $0.uncertaintyBytes) }
                    ?? "–"
            }
            out.append("| \(code(strategy.strategy)) | " + values.joined(separator: " | ") + " |")
        }
        out.append("")
        return out
    }

    /// What ± after a peak means.
    static let floorNote =
        "± after a peak is its measurement floor, the largest of the repetitions: what the harness itself allocated "
        + "after the baseline, plus, for sampled peaks, how far two back-to-back readings of the live heap disagreed "
        + "where the peak was read (a thread cache filling or flushing while jemalloc summed the caches). A peak "
        + "without one had a floor of 0 B: the harness allocated nothing after the baseline and the readings agreed."

    /// `1.12 KiB ± 96 B`: a figure with its measurement floor, or the figure alone when the floor is unknown or 0.
    static func withFloor(_ bytes: Double, _ uncertaintyBytes: Int?) -> String {
        guard let uncertaintyBytes, uncertaintyBytes > 0 else { return Units.formatBytes(bytes) }
        return Units.formatBytes(bytes) + " ± " + Units.formatBytes(uncertaintyBytes)
    }

    /// What the exact columns are (the reading names the strategy whose spikes the sampler missed most).
    static let exactNote = [
        "Exact peak counts every allocation (`--peak exact`: every malloc and free moves one counter of live "
            + "size-class bytes); spike excess is the exact peak minus the sampled one: what fell between the "
            + "samples (the reading names the strategy whose peak the sampler missed most).",
        "",
    ]

    static func environment(_ environment: EnvironmentInfo, cases: [CaseResult]) -> [String] {
        var out: [String] = []
        out.append("## Environment")
        out.append("")
        out.append("| | |")
        out.append("|---|---|")
        out.append("| memharness | \(cell(environment.toolVersion)) |")
        out.append("| jemalloc | \(cell(environment.jemallocVersion)) |")
        let settings = environment.jemallocSettings.sorted { $0.key < $1.key }.map { "`\($0.key)=\($0.value)`" }.joined(
            separator: " ")
        out.append("| jemalloc settings | \(cell(settings)) |")
        out.append("| Swift | \(cell(environment.swiftVersion)) |")
        out.append("| OS | \(cell(environment.operatingSystem)) |")
        out.append("| Kernel | \(cell(environment.kernel)) |")
        out.append("| CPU | \(cell(environment.cpuModel)) × \(environment.cpuCount) |")
        out.append("| Memory | \(Units.formatBytes(environment.memoryBytes)) |")
        let sampling = cases.compactMap { $0.measurements?.sampling }
        let achieved = sampling.filter { $0.sampleCount > 1 }.map { Double($0.achievedIntervalNanoseconds) }
        let requested = environment.requestedIntervalNanoseconds
        var interval = requested > 0 ? "requested \(Units.formatDuration(nanoseconds: requested))" : "off"
        if let median = Statistics.median(achieved), let worst = achieved.max() {
            interval +=
                ", achieved \(Units.formatDuration(nanoseconds: Int64(median))) median, "
                + "\(Units.formatDuration(nanoseconds: Int64(worst))) slowest case"
        }
        out.append("| Sampling interval | \(interval) |")
        let samplerBytes = sampling.map(\.samplerAllocatedBytes).max() ?? 0
        out.append("| Sampler's own allocations | \(Units.formatBytes(samplerBytes)) (largest over cases) |")
        return out
    }

    /// Where the run's time went: each scenario's cases' wall time, slowest first; nothing for records
    /// without case times.
    static func timeTable(_ report: RunReport) -> [String] {
        let times = report.scenarioTimes.sorted { $0.nanoseconds > $1.nanoseconds }
        guard !times.isEmpty else { return [] }
        let total = max(times.reduce(Int64(0)) { $0 + $1.nanoseconds }, 1)
        var out = ["", "### Time per scenario", ""]
        if let elapsed = report.elapsedNanoseconds {
            out.append(
                "The cases ran in \(Units.formatSeconds(elapsed)) of wall time; their own times add up to "
                    + "\(Units.formatSeconds(total)) (cases of `parallel: true` scenarios run side by side with "
                    + "--jobs)."
            )
            out.append("")
        }
        let anyInstrumented = times.contains { $0.instrumentedCases > 0 }
        out.append("| Scenario | Cases |\(anyInstrumented ? " Instrumented |" : "") Case time | Share |")
        out.append("|---|---:|\(anyInstrumented ? "---:|" : "")---:|---:|")
        for time in times {
            let share = Units.fixed(Double(time.nanoseconds) / Double(total) * 100, decimals: 0) + "%"
            let instrumented = anyInstrumented ? " \(time.instrumentedCases) |" : ""
            out.append(
                "| \(cell(time.scenario)) | \(time.cases) |\(instrumented) \(Units.formatSeconds(time.nanoseconds)) "
                    + "| \(share) |")
        }
        return out
    }

    static func unitLabel(_ unit: Metric.Unit?) -> String {
        switch unit {
        case .bytes?: return " (bytes)"
        case .milliseconds?: return " (ms)"
        case .ratio?: return " (ratio)"
        case .perSecond?: return " (/s)"
        case .count?, nil: return ""
        }
    }

    static func format(_ metric: Metric) -> String {
        switch metric.unit {
        case .bytes: return Units.formatBytes(metric.value)
        case .count:
            return metric.value == metric.value.rounded()
                ? Units.fixed(metric.value, decimals: 0) : Units.fixed(metric.value, decimals: 1)
        case .milliseconds: return Units.fixed(metric.value, decimals: 2)
        case .ratio: return Units.fixed(metric.value, decimals: 3)
        case .perSecond: return Units.fixed(metric.value, decimals: 1)
        }
    }

    /// Escapes text for a table cell: pipes and line breaks would break the table.
    static func cell(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "|": result += "\\|"
            case "\n", "\r\n", "\r": result += " "
            default: result.append(character)
            }
        }
        return result
    }

    /// `text` as an inline code span: the fence is one backtick longer than the longest run of backticks
    /// inside, and line breaks become spaces. In a table cell (`inTable`) pipes are escaped too; in running
    /// text they need not be (and an escape would show).
    static func code(_ text: String, inTable: Bool = true) -> String {
        var longest = 0
        var run = 0
        for character in text {
            run = character == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: longest + 1)
        let padding = text.hasPrefix("`") || text.hasSuffix("`") ? " " : ""
        let body = inTable ? cell(text) : String(text.map { $0.isNewline ? " " : $0 })
        return fence + padding + body + padding + fence
    }

    /// GitHub's heading anchor: lowercase, spaces to dashes, punctuation dropped.
    static func anchor(_ heading: String) -> String {
        String(
            heading.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                if character.isLetter || character.isNumber || character == "-" || character == "_" { return character }
                return nil
            })
    }
}
