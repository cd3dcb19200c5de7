import HarnessModel

/// Every file of a report folder, rendered from a `RunReport`: the CLI only writes them.
public enum ReportBundle {
    /// Options that shape the rendered files.
    public struct Options: Sendable {
        /// Rows per case in `samples.csv` (0 keeps all).
        public var samplesMaxRows = 2000
        /// Value scale of the charts; nil chooses per chart (log when peaks differ by more than 30x).
        public var chartScale: ValueScale?

        public init(samplesMaxRows: Int = 2000, chartScale: ValueScale? = nil) {
            self.samplesMaxRows = samplesMaxRows
            self.chartScale = chartScale
        }
    }

    /// The file name stem of a scenario's charts: lowercase letters, digits and dashes.
    public static func chartStem(_ scenario: String) -> String {
        String(scenario.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }

    /// The charts of every scenario: relative path → SVG text, in report order.
    public static func charts(_ report: RunReport, scale: ValueScale?) -> [(path: String, text: String)] {
        var files: [(String, String)] = []
        for run in report.scenarios {
            let stem = chartStem(run.name)
            if let svg = TimelineChart.render(run, scale: scale) { files.append(("charts/\(stem)-timeline.svg", svg)) }
            if let svg = PeakBarChart.render(run, scale: scale) { files.append(("charts/\(stem)-peaks.svg", svg)) }
            if let svg = GaugeChart.render(run) { files.append(("charts/\(stem)-gauges.svg", svg)) }
        }
        return files
    }

    /// Every file of the folder: relative path → contents, data first and `report.md` last.
    public static func render(_ report: RunReport, options: Options = Options(), checks: [CheckResult] = []) -> [(path: String, text: String)] {
        let charts = charts(report, scale: options.chartScale)
        var files: [(String, String)] = [
            ("summary.csv", SummaryCSV.render(report)),
            ("samples.csv", SamplesCSV.render(report, maxRowsPerCase: options.samplesMaxRows)),
        ]
        if let sweeps = report.sweeps, !sweeps.isEmpty {
            files.append(("sweep.csv", SweepSection.csv(sweeps)))
        }
        files += charts
        files.append(("report.md", MarkdownReport.render(report, charts: Set(charts.map(\.path)), checks: checks)))
        return files
    }
}
