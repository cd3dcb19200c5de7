import Foundation
import HarnessModel

/// Every file of a report folder, rendered from a `RunRecord`: the writer only writes them.
public enum ReportBundle {
    /// The file name stem of a scenario's charts: lowercase letters, digits and dashes.
    public static func chartStem(_ scenario: String) -> String {
        String(scenario.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
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
        var files: [(String, String)] = []
        for run in report.scenarios {
            let stem = chartStem(run.name)
            if let svg = TimelineChart.render(run, scale: scale) { files.append(("charts/\(stem)-timeline.svg", svg)) }
            if let svg = PeakBarChart.render(run, scale: scale) { files.append(("charts/\(stem)-peaks.svg", svg)) }
            if let svg = GaugeChart.render(run) { files.append(("charts/\(stem)-gauges.svg", svg)) }
        }
        return files
    }

    /// The renderings of `record`: relative path → contents, data first and `report.md` last.
    /// A pure function of the record: rendering it again gives the same bytes.
    public static func renderings(_ record: RunRecord) -> [(path: String, data: Data)] {
        let report = record.report
        let charts = charts(report, scale: record.rendering.chartScale)
        var files: [(String, String)] = [
            ("summary.csv", SummaryCSV.render(report)),
            ("samples.csv", SamplesCSV.render(report, maxRowsPerCase: 0)),
        ]
        if let sweeps = report.sweeps, !sweeps.isEmpty {
            files.append(("sweep.csv", SweepSection.csv(sweeps)))
        }
        files += charts
        files.append(
            ("report.md", MarkdownReport.render(report, charts: Set(charts.map(\.path)), checks: record.checks)))
        return files.map { ($0.0, Data($0.1.utf8)) }
    }

    /// Every file of the folder: `run.json` first, then the renderings.
    public static func files(_ record: RunRecord) throws(ReportError) -> [(path: String, data: Data)] {
        [("run.json", try RecordCodec.encode(record))] + renderings(record)
    }
}

/// Reading and writing `run.json`.
public enum RecordCodec {
    /// The largest `run.json` read, bytes: a long sweep's record is tens of MB; beyond this it is not a record.
    public static let maximumFileBytes = 512 << 20

    /// The record as `run.json`: pretty-printed, keys sorted (stable diffs), non-finite numbers as strings.
    public static func encode(_ record: RunRecord) throws(ReportError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return try encoder.encode(record) + Data("\n".utf8)
        } catch {
            throw .unwritable(path: "run.json", reason: "cannot encode the record: \(error)")
        }
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
                    "schema '\(Excerpt.of(header.schema ?? "none"))' is not \(RunRecord.currentSchema): written by another "
                    + "version of memharness; run the scenarios again with this one")
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
