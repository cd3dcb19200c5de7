import Foundation
import HarnessModel
import Reports

/// Writes a run's report folder atomically: every file is written to a temporary name in the same
/// folder and renamed over the old one, so a reader (or a crash) never sees a half-written file.
enum ReportFiles {
    static func write(_ report: RunReport, to directory: String, samplesMaxRows: Int) throws {
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var stripped = report
        for scenario in stripped.scenarios.indices {
            for index in stripped.scenarios[scenario].cases.indices {
                stripped.scenarios[scenario].cases[index].samples = nil
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Order: data first, the report that points at it last.
        let files: [(String, Data)] = [
            ("summary.csv", Data(SummaryCSV.render(report).utf8)),
            ("samples.csv", Data(SamplesCSV.render(report, maxRowsPerCase: samplesMaxRows).utf8)),
            ("run.json", try encoder.encode(stripped)),
            ("report.md", Data(MarkdownReport.render(report).utf8)),
        ]
        for (name, data) in files {
            try atomicWrite(data, to: "\(directory)/\(name)")
        }
    }

    static func atomicWrite(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())")
        try data.write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "rename failed: \(reason)"])
        }
    }
}
