import HarnessModel

/// A series of a history with what change-point detection found in it.
public struct AnalysedSeries: Sendable, Hashable {
    public var series: HistorySeries
    public var analysis: SeriesAnalysis
}

/// A history analysed: its runs and every series with its change points.
public struct HistoryAnalysis: Sendable, Hashable {
    public var runs: [HistoryRun]
    public var series: [AnalysedSeries]

    /// Analyses every series of `table`.
    public init(_ table: HistoryTable, settings: ChangePointDetection.Settings = .init()) {
        runs = table.runs
        series = table.series.map {
            AnalysedSeries(
                series: $0,
                analysis: ChangePointDetection.analyse(
                    $0.values, isBytes: $0.isBytes, followsPageCache: $0.key.followsPageCache, settings: settings))
        }
    }

    /// The run where a change point of `entry` starts.
    public func run(of change: ChangePoint, in entry: AnalysedSeries) -> HistoryRun {
        runs[entry.series.runIndices[change.index]]
    }
}

/// `history gate`: does the newest run start a step up of a figure a scenario gates on?
public struct HistoryGateVerdict: Sendable, Hashable {
    /// A gated figure the newest run moved up, above the noise.
    public struct Finding: Sendable, Hashable {
        public var key: SeriesKey
        public var isBytes: Bool
        public var change: ChangePoint
    }

    /// The newest run; nil for an empty history.
    public var newest: HistoryRun?
    /// Gated figures the newest run stepped up, sorted by series.
    public var findings: [Finding]
    /// Gated figures the newest run stepped down (improvements: reported, never failing).
    public var improvements: [Finding]
    /// Gated series the newest run measured.
    public var checkedSeries: Int

    /// The verdict of `analysis` for its newest run: every gated series the newest run measured where that run
    /// alone steps beyond the noise (`SeriesAnalysis.newestRunStep`). Memory figures are lower-is-better, so
    /// only a step up fails.
    public init(_ analysis: HistoryAnalysis) {
        newest = analysis.runs.last
        var findings: [Finding] = []
        var improvements: [Finding] = []
        var checked = 0
        let newestIndex = analysis.runs.count - 1
        for entry in analysis.series where entry.series.gated && entry.series.runIndices.last == newestIndex {
            checked += 1
            guard let change = entry.analysis.newestRunStep else { continue }
            let finding = Finding(key: entry.series.key, isBytes: entry.series.isBytes, change: change)
            if change.step > 0 { findings.append(finding) } else { improvements.append(finding) }
        }
        self.findings = findings
        self.improvements = improvements
        checkedSeries = checked
    }

    /// True when the gate fails.
    public var failed: Bool { !findings.isEmpty }
}
