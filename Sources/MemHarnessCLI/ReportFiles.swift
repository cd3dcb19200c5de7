import Foundation
import HarnessModel
import Reports

/// Writes a run's report folder atomically: every file is written to a temporary name in the same
/// folder and renamed over the old one, so a reader (or a crash) never sees a half-written file.
enum ReportFiles {
    static func write(_ report: RunReport, to directory: String, options: ReportBundle.Options, checks: [CheckResult] = []) throws {
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: "\(directory)/charts", withIntermediateDirectories: true)
        var stripped = report
        for scenario in stripped.scenarios.indices {
            for index in stripped.scenarios[scenario].cases.indices {
                stripped.scenarios[scenario].cases[index].samples = nil
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try atomicWrite(try encoder.encode(stripped), to: "\(directory)/run.json")
        // ReportBundle orders data first and report.md last.
        for (path, text) in ReportBundle.render(report, options: options, checks: checks) {
            try atomicWrite(Data(text.utf8), to: "\(directory)/\(path)")
        }
        try updateIndex(for: directory)
    }

    /// Rewrites `index.md` in the parent folder when the report went to a folder of `Reports/`.
    static func updateIndex(for directory: String) throws {
        let parent = URL(fileURLWithPath: directory).standardizedFileURL.deletingLastPathComponent()
        guard parent.lastPathComponent == "Reports" else { return }
        let fileManager = FileManager.default
        let folders = ((try? fileManager.contentsOfDirectory(atPath: parent.path)) ?? []).sorted()
        let entries = folders.compactMap { folder -> RunIndex.Entry? in
            guard let data = fileManager.contents(atPath: parent.appendingPathComponent(folder).appendingPathComponent("run.json").path),
                  let report = try? JSONDecoder().decode(RunReport.self, from: data) else { return nil }
            return RunIndex.Entry(folder: folder, report: report)
        }
        try atomicWrite(Data(RunIndex.render(entries).utf8), to: parent.appendingPathComponent("index.md").path)
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
