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

    /// The charts of one scenario: relative path → SVG text.
    static func charts(_ run: ScenarioRun, scale: ValueScale?) -> [(path: String, text: String)] {
        let stem = chartStem(run.name)
        var files: [(String, String)] = []
        if let svg = TimelineChart.render(run, scale: scale) { files.append(("charts/\(stem)-timeline.svg", svg)) }
        if let svg = PeakBarChart.render(run, scale: scale) { files.append(("charts/\(stem)-peaks.svg", svg)) }
        if let svg = GaugeChart.render(run) { files.append(("charts/\(stem)-gauges.svg", svg)) }
        return files
    }

    /// The charts of every scenario: relative path → SVG text, in report order.
    public static func charts(_ report: RunReport, scale: ValueScale?) -> [(path: String, text: String)] {
        report.scenarios.flatMap { charts($0, scale: scale) }
    }

    /// Renders every file of `record` but `run.json`, handing each to `emit` as soon as it is rendered
    /// (data first, `report.md` last: a reader who sees it sees every file it links to), so a large run
    /// never holds all its files at once. A pure function of the record: the same bytes every time. With
    /// `earlier`, `report.html` is the comparison page of the two runs (`comparisonPage`).
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
        var linked = Set<String>()
        // The pictures report.html shows (peaks, gauges, cycles: small SVGs); the rest is written and let go.
        var images: [String: Data] = [:]
        for run in report.scenarios {
            for (path, text) in charts(run, scale: record.rendering.chartScale) {
                try emit(path, Data(text.utf8))
                linked.insert(path)
                if !path.hasSuffix("-timeline.svg") { images[path] = Data(text.utf8) }
            }
        }
        for (path, data) in AttributionSection.files(report) + (try HeapGraphFiles.files(report)) {
            try emit(path, data)
            linked.insert(path)
            if path.hasSuffix(".svg") && !path.hasSuffix("-flame.svg") { images[path] = data }
        }
        let markdown = MarkdownReport.render(report, charts: linked, checks: record.checks)
        try emit(
            "report.html", Data(HtmlReport.render(record, markdown: markdown, images: images, earlier: earlier).utf8))
        try emit("report.md", Data(markdown.utf8))
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

/// Reading and writing `run.json`.
public enum RecordCodec {
    /// The largest `run.json` read, bytes: a long sweep's record is tens of MB; beyond this it is not a record.
    public static let maximumFileBytes = 512 << 20

    /// The record as `run.json`: pretty-printed, keys sorted (stable diffs), non-finite numbers as strings.
    ///
    /// Scenarios are encoded one at a time and spliced into the rest of the record, so the encoder never
    /// holds the whole run's tree (a 1,000-case sweep's would be several times its text); the bytes are
    /// those of encoding the record at once (`encodeWhole`).
    public static func encode(_ record: RunRecord) throws(ReportError) -> Data {
        var out = Data()
        try encode(record) { chunk throws(ReportError) in out.append(chunk) }
        return out
    }

    /// `run.json` in consecutive pieces handed to `emit`: the frame up to the scenarios, each scenario,
    /// then the rest, so neither the encoder nor the caller holds the whole text.
    public static func encode(
        _ record: RunRecord, _ emit: (_ chunk: Data) throws(ReportError) -> Void
    ) throws(ReportError) {
        var frame = record
        frame.report.scenarios = []
        let empty = Data("\n    \"scenarios\" : [\n\n    ]".utf8)
        let text = try encodeWhole(frame)
        guard !record.report.scenarios.isEmpty, let slot = text.range(of: empty),
            text.range(of: empty, in: slot.upperBound..<text.endIndex) == nil
        else { return try emit(encodeWhole(record)) }
        try emit(Data(text[..<slot.lowerBound]) + Data("\n    \"scenarios\" : [".utf8))
        for (index, scenario) in record.report.scenarios.enumerated() {
            try emit(Data((index == 0 ? "\n" : ",\n").utf8) + indented(try encodeValue(scenario), by: 6))
        }
        try emit(Data("\n    ]".utf8) + Data(text[slot.upperBound...]))
    }

    /// The record encoded in one piece, with the final newline.
    public static func encodeWhole(_ record: RunRecord) throws(ReportError) -> Data {
        try encodeValue(record) + Data("\n".utf8)
    }

    private static func encodeValue(_ value: some Encodable) throws(ReportError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return try encoder.encode(value)
        } catch {
            throw .unwritable(path: "run.json", reason: "cannot encode the record: \(error)")
        }
    }

    /// `json` with `spaces` more indentation on every line but empty ones (as the encoder writes nested
    /// values; JSON strings hold no raw line breaks, so every line break is the printer's).
    private static func indented(_ json: Data, by spaces: Int) -> Data {
        let newline = UInt8(ascii: "\n")
        let indent = [UInt8](repeating: UInt8(ascii: " "), count: spaces)
        var out = Data()
        out.reserveCapacity(json.count + json.count / 8)
        var atLineStart = true
        for byte in json {
            if atLineStart && byte != newline { out.append(contentsOf: indent) }
            out.append(byte)
            atLineStart = byte == newline
        }
        return out
    }

    /// Reads `run.json` text; `file` names it in errors, with the line and column of the problem.
    ///
    /// Checked before decoding: strict JSON (`JSONText`: nesting, duplicate keys, finite numbers) with
    /// every number within ±2^53, then the schema; after decoding, what the renderings rely on
    /// (`RecordCheck`). A record that passes renders without a trap.
    public static func decode(_ data: Data, file: String) throws(ReportError) -> RunRecord {
        let bytes = [UInt8](data)
        do {
            try JSONText.check(bytes, numberMagnitudeLimit: RecordCheck.numberMagnitudeLimit)
        } catch {
            throw ReportError.damaged(error, file: file)
        }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        struct Header: Decodable { var schema: String? }
        // Handled: JSONText.check placed syntax errors above, so what fails here is a value that is not an object.
        guard let header = try? decoder.decode(Header.self, from: data) else {
            throw .damaged(
                file: file, line: 1, column: 1,
                reason: "not a JSON object; expected a run.json written by memharness run")
        }
        guard header.schema == RunRecord.currentSchema else {
            let place = JSONText.place(of: [RecordCheck.Key("schema")], in: bytes)
            throw .damaged(
                file: file, line: place?.line ?? 1, column: place?.column ?? 1,
                reason:
                    "schema '\(Excerpt.of(header.schema ?? "none"))' is not \(RunRecord.currentSchema): written by "
                    + "another version of memharness; run the scenarios again with this one")
        }
        let record: RunRecord
        do {
            record = try decoder.decode(RunRecord.self, from: data)
        } catch let error as DecodingError {
            throw ReportError.damaged(error, file: file, bytes: bytes)
        } catch {
            throw .damaged(file: file, line: nil, reason: "\(error)")
        }
        if let problem = RecordCheck.firstProblem(in: record) {
            let place = JSONText.place(of: problem.path, in: bytes)
            throw .damaged(file: file, line: place?.line, column: place?.column, reason: problem.message)
        }
        return record
    }
}
