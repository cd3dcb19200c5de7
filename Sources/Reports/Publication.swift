import FileIO
import Foundation
import HarnessModel

/// What a command shows and writes besides the report folder, made from the run's record: the readings and
/// the check table for stdout, the JUnit and benchmark JSON files asked for, and GitHub's annotations and
/// step summary when running there. The command prints the texts; `writeFiles` and `appendStepSummary` do
/// the file I/O, as `ReportFolder` does for the folder.
public struct Publication: Sendable {
    /// A file to write and its text.
    public struct OutputFile: Sendable, Hashable {
        public var path: String
        public var text: String

        public init(path: String, text: String) {
            self.path = path
            self.text = text
        }
    }

    /// For stdout: each scenario's reading, where the report is, then the check table (at most `width` columns).
    public var results: String
    /// The JUnit XML (`--junit`) and github-action-benchmark JSON (`--json`) files, in that order.
    public var files: [OutputFile] = []
    /// GitHub's workflow commands, an `::error` per failed check, when `GITHUB_ACTIONS` is `true`; else nil.
    public var annotations: String?
    /// The checks and readings in Markdown and the file to append them to (`GITHUB_STEP_SUMMARY`); else nil.
    public var stepSummary: OutputFile?

    /// The publication of `record`, whose report folder is `folder`. `junit` and `json` are the files asked
    /// for; `environment` is read for `GITHUB_ACTIONS` and `GITHUB_STEP_SUMMARY`. `width`: the terminal's columns
    /// for the check table; nil when stdout is no terminal (the table then keeps to 120 columns, each failure
    /// message whole on one line).
    public init(
        _ record: RunRecord, folder: String, junit: String? = nil, json: String? = nil,
        environment: [String: String] = [:], width: Int? = 100
    ) {
        var lines = record.report.scenarios.map { "\($0.name): \(ScenarioSummary($0).reading(.plain))" }
        lines.append("Report: \(folder)/report.md")
        results =
            lines.joined(separator: "\n") + "\n"
            + (record.checks.isEmpty ? "" : CheckOutputs.terminalTable(record.checks, width: width))
        if let junit { files.append(OutputFile(path: junit, text: CheckOutputs.junit(record.checks))) }
        if let json { files.append(OutputFile(path: json, text: CheckOutputs.benchmarkJSON(record.report))) }
        if environment["GITHUB_ACTIONS"] == "true" { annotations = CheckOutputs.githubAnnotations(record.checks) }
        if let path = environment["GITHUB_STEP_SUMMARY"], !path.isEmpty {
            let readings = record.report.scenarios.map { "- **\($0.name)**: \(ScenarioSummary($0).reading)" }
            let text = CheckOutputs.markdown(record.checks) + "\n" + readings.joined(separator: "\n") + "\n"
            stepSummary = OutputFile(path: path, text: text)
        }
    }

    /// Writes `files`, each replaced in one step (a temporary sibling and a rename).
    public func writeFiles() throws(ReportError) {
        for file in files { try ReportFolder.replaceFile(Data(file.text.utf8), at: file.path) }
    }

    /// Appends the step summary to its file (created when missing); nil when done or there is none, else the
    /// warning to show. GitHub reads the summary after the step: one that cannot be appended is worth a
    /// warning only.
    public func appendStepSummary() -> String? {
        guard let stepSummary, !Self.appendToFile(stepSummary.text, at: stepSummary.path) else { return nil }
        return "could not append to GITHUB_STEP_SUMMARY \(stepSummary.path)"
    }

    /// What `profile` prints: per run of the program its peak above its start, exact peak, RSS peak and exit,
    /// then its notes (`ProgramNotes`), indented.
    public static func profileSummary(_ report: RunReport, folder: String, quiet: Bool = false) -> String {
        var lines: [String] = []
        for result in report.scenarios.flatMap({ $0.cases + $0.instrumentedCases }) where !quiet {
            guard let m = result.measurements else { continue }
            var parts = ["peak allocated \(Units.formatBytes(m.peakAllocatedNetBytes)) above its start"]
            if let exact = m.exact {
                let bound = exact.summedProcessCount == nil ? "" : "at most "
                parts.append("exact peak \(bound)\(Units.formatBytes(exact.peakNetBytes))")
            }
            parts.append("peak RSS \(Units.formatBytes(m.peakRSSBytes))")
            if let residue = m.residueBytes { parts.append("still allocated at exit \(Units.formatBytes(residue))") }
            if let program = m.program {
                switch program.termination {
                case .exited(let status): parts.append("exit status \(status)")
                case .signaled(let signal): parts.append("killed by signal \(signal)")
                case nil: break
                }
            }
            lines.append("\(result.label): " + parts.filter { !$0.isEmpty }.joined(separator: ", "))
            lines.append(contentsOf: ProgramNotes.notes(m).map { "  " + $0 })
        }
        lines.append("Report: \(folder)/report.md")
        return lines.joined(separator: "\n")
    }

    /// A line for stderr: an error, or a note.
    public struct Notice: Sendable, Hashable {
        public var isError: Bool
        public var text: String
    }

    /// What a run's command says on stderr once its report is written: that thresholds were not checked
    /// (`quick`, when the scenarios have any), a line per measured case that did not complete (in run order;
    /// a note when the memory limit killed it, a result like a peak, else an error), where the time went
    /// (with `showTime`), then the run's `warnings`.
    public static func closingNotices(
        _ report: RunReport, warnings: [String] = [], showTime: Bool = false, quick: Bool = false
    ) -> [Notice] {
        var notices: [Notice] = []
        if quick && report.scenarios.contains(where: { !$0.thresholds.isEmpty }) {
            let text = "note: --quick shortens the steps the thresholds were written for, so they were not checked"
            notices.append(Notice(isError: false, text: text))
        }
        notices += report.scenarios.flatMap(\.cases).filter { $0.status != .ok }.map { result in
            result.status == .killedByMemoryLimit
                ? Notice(isError: false, text: "memory limit: \(result.label): \(result.failureText ?? "")")
                : Notice(isError: true, text: "\(result.label): \(result.status.rawValue): \(result.failureText ?? "")")
        }
        if showTime, let summary = report.timeSummary {
            notices.append(Notice(isError: false, text: "time: \(summary)"))
        }
        return notices + warnings.map { Notice(isError: false, text: "warning: \($0)") }
    }

    private static func appendToFile(_ text: String, at path: String) -> Bool {
        guard let handle = FileHandle(forWritingAtPath: path) ?? createFile(path) else { return false }
        defer { try? handle.close() }  // the write below already succeeded or failed
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(text.utf8))
            return true
        } catch {
            return false
        }
    }

    private static func createFile(_ path: String) -> FileHandle? {
        FileManager.default.createFile(atPath: path, contents: nil) ? FileHandle(forWritingAtPath: path) : nil
    }
}
