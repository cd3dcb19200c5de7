import FileIO
import Foundation
import HarnessModel
import Verdicts

/// Every file of a report folder, rendered from a `RunRecord`: the writer only writes them.
public enum ReportBundle {
    /// The record a finished run stores and the status it exits with, built once from its report: the checks
    /// (thresholds, leak expectations, `baseline`) judged on the whole report and worded (`CheckWording`), then the
    /// samples thinned as
    /// `record(_:checks:rendering:)` does. A pure function: the same report gives the same record.
    public static func verdict(
        for report: RunReport, baseline: BaselineReference? = nil, policy: GatePolicy = GatePolicy(),
        rendering: RenderingOptions = RenderingOptions()
    ) -> GateVerdict {
        let checks = Gate.checks(for: report, baseline: baseline, policy: policy)
        return GateVerdict(
            record: record(report, checks: CheckWording.results(checks), rendering: rendering),
            status: Gate.status(of: report, checks: checks, policy: policy))
    }

    /// The file name stem of a scenario's (or a strategy's) files: lowercase words of letters and digits joined by
    /// single dashes, camel case split into words: `json-cache [responseSize=16KiB]` → `json-cache-response-size-16kib`.
    /// The one slug of every file name made from a name (charts, stacks, heap captures).
    public static func chartStem(_ scenario: String) -> String {
        var words: [String] = []
        var word = ""
        let characters = Array(scenario)
        for (index, character) in characters.enumerated() {
            guard character.isLetter || character.isNumber else {
                if !word.isEmpty { words.append(word) }
                word = ""
                continue
            }
            // A capital that follows a small letter and starts a word (`responseSize`), not a unit (`KiB`).
            let startsWord =
                character.isUppercase && index > 0 && characters[index - 1].isLowercase
                && index + 1 < characters.count && characters[index + 1].isLowercase
            if startsWord && !word.isEmpty {
                words.append(word)
                word = ""
            }
            word.append(contentsOf: character.lowercased())
        }
        if !word.isEmpty { words.append(word) }
        return words.isEmpty ? "unnamed" : words.joined(separator: "-")
    }

    /// The record of a run as it is stored: every case's samples thinned to `rendering.samplesMaxRows`
    /// (neighbours merged keeping maxima), so the record holds exactly what its renderings show.
    public static func record(_ report: RunReport, checks: [CheckResult], rendering: RenderingOptions) -> RunRecord {
        var report = report
        for scenario in report.scenarios.indices {
            for index in report.scenarios[scenario].cases.indices {
                let outcome = report.scenarios[scenario].cases[index].outcome
                report.scenarios[scenario].cases[index].outcome = outcome.mapMeasurements { m in
                    m.replacingSamples(m.samples.map { SeriesThinning.thin($0, maxRows: rendering.samplesMaxRows) })
                }
            }
        }
        return RunRecord(report: report, checks: checks, rendering: rendering)
    }

    /// The charts of every scenario: relative path → SVG text, in report order.
    public static func charts(_ report: RunReport, scale: ValueScale?) -> [(path: String, text: String)] {
        report.scenarios.flatMap { ChartBuilder.charts($0, scale: scale) }.compactMap { block in
            block.file.flatMap { file in FigureSVG.render(block.chart).map { (file, $0) } }
        }
    }

    /// Renders every file of `record` but `run.json`, handing each to `emit` as soon as it is rendered
    /// (data first, `report.md` last: a reader who sees it sees every file it links to). A pure function of the
    /// record: the same bytes every time. With `earlier`, `report.html` is the comparison page of the two runs
    /// (`comparisonPage`).
    public static func render(
        _ record: RunRecord, earlier: HtmlReport.EarlierRun? = nil,
        _ emit: (_ path: String, _ data: Data) throws(ReportError) -> Void
    ) throws(ReportError) {
        let report = record.report
        try emit("summary.csv", Data(SummaryCSV.render(report).utf8))
        if let instrumented = SummaryCSV.renderInstrumented(report) {
            try emit("instrumented.csv", Data(instrumented.utf8))
        }
        try emit("samples.csv", Data(SamplesCSV.render(report, maxRowsPerCase: 0).utf8))
        if let sweeps = report.sweeps, !sweeps.isEmpty {
            try emit("sweep.csv", Data(SweepSection.csv(sweeps).utf8))
        }
        let document = ReportBuilder.document(report, checks: record.checks, scale: record.rendering.chartScale)
        for figure in document.figures {
            guard let file = figure.file, let svg = FigureSVG.render(figure.chart) else { continue }
            try emit(file, Data(svg.utf8))
        }
        for (path, data) in AttributionSection.files(report) + (try HeapGraphFiles.files(report)) {
            try emit(path, data)
        }
        try emit("report.html", Data(HtmlReport.render(record, document: document, earlier: earlier).utf8))
        try emit("report.md", Data(MarkdownRenderer.render(document).utf8))
    }

    /// The page `memharness compare DIR --against EARLIER --html FILE` writes: `report.html` of `record` with the
    /// earlier run beside it (its strategies in each difference view, the sites that grew since at the top).
    public static func comparisonPage(_ record: RunRecord, since earlier: HtmlReport.EarlierRun) -> Data {
        var page = Data()
        // Collecting cannot fail: only `emit` throws, and this one does not.
        try? render(record, earlier: earlier) { path, data in
            if path == "report.html" { page = data }
        }
        return page
    }

    /// Every file of the folder, `run.json` first, handed to `emit` one at a time (`run.json` in
    /// consecutive pieces: the pieces of one path in a row are one file).
    public static func produce(
        _ record: RunRecord, _ emit: (_ path: String, _ data: Data) throws(ReportError) -> Void
    ) throws(ReportError) {
        try RecordCodec.encode(record) { chunk throws(ReportError) in try emit("run.json", chunk) }
        try render(record, emit)
    }

    /// The renderings of `record` (every file but `run.json`), in the order `render` makes them.
    public static func renderings(_ record: RunRecord) -> [(path: String, data: Data)] {
        var files: [(path: String, data: Data)] = []
        // Collecting cannot fail: only `emit` throws, and this one does not.
        try? render(record) { path, data in files.append((path, data)) }
        return files
    }

    /// Every file of the folder: `run.json` first, then the renderings.
    public static func files(_ record: RunRecord) throws(ReportError) -> [(path: String, data: Data)] {
        var files: [(path: String, data: Data)] = []
        try produce(record) { path, data in
            if files.last?.path == path { files[files.count - 1].data.append(data) } else { files.append((path, data)) }
        }
        return files
    }
}
