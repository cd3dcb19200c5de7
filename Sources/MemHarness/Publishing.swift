import ArgumentParser
import Foundation
import HarnessModel
import Reports
import Runner

/// What a command prints and writes besides the report folder: the readings and the check table on
/// stdout, JUnit/JSON files when asked, and GitHub's annotations and step summary when running there.
enum Publishing {
    static func publish(_ record: RunRecord, folder: String, gate: GateOptions) throws {
        var lines = record.report.scenarios.map { "\($0.name): \(plain(ScenarioSummary($0).reading))" }
        lines.append("Report: \(folder)/report.md")
        Terminal.result(lines.joined(separator: "\n"))
        if !record.checks.isEmpty { Terminal.result(CheckOutputs.terminalTable(record.checks, width: 100)) }
        do {
            if let junit = gate.junit {
                try ReportFolder.replaceFile(Data(CheckOutputs.junit(record.checks).utf8), at: junit)
            }
            if let json = gate.json {
                try ReportFolder.replaceFile(Data(CheckOutputs.benchmarkJSON(record.report).utf8), at: json)
            }
        } catch {
            throw Terminal.fail(error.description, status: error.exitStatus)
        }
        let environment = ProcessInfo.processInfo.environment
        if environment["GITHUB_ACTIONS"] == "true" {
            Terminal.result(CheckOutputs.githubAnnotations(record.checks))
        }
        if let path = environment["GITHUB_STEP_SUMMARY"], !path.isEmpty {
            let readings = record.report.scenarios.map { "- **\($0.name)**: \(ScenarioSummary($0).reading)" }
            let text = CheckOutputs.markdown(record.checks) + "\n" + readings.joined(separator: "\n") + "\n"
            // GitHub reads the summary after the step; a summary that cannot be appended is worth a warning only.
            if !appendToFile(text, at: path) {
                Terminal.note("warning: could not append to GITHUB_STEP_SUMMARY \(path)")
            }
        }
    }

    /// What `profile` prints: per run of the program its peak above its start, exact peak, RSS peak and exit.
    static func profileSummary(_ report: RunReport, folder: String) -> String {
        var lines: [String] = []
        for result in report.scenarios.flatMap({ $0.cases + $0.attributedCases }) {
            guard let m = result.measurements else { continue }
            var parts = ["peak allocated \(Units.formatBytes(m.peakAllocatedNetBytes)) above its start"]
            if let exact = m.exactPeakNetBytes { parts.append("exact peak \(Units.formatBytes(exact))") }
            parts.append("peak RSS \(Units.formatBytes(m.peakRSSBytes))")
            if let residue = m.residueBytes { parts.append("still allocated at exit \(Units.formatBytes(residue))") }
            if let program = m.program {
                parts.append(
                    program.exitStatus.map { "exit status \($0)" } ?? program.signal.map { "killed by signal \($0)" }
                        ?? "")
            }
            lines.append("\(result.label): " + parts.filter { !$0.isEmpty }.joined(separator: ", "))
        }
        lines.append("Report: \(folder)/report.md")
        return lines.joined(separator: "\n")
    }

    /// One stderr line per case that did not complete (kills by the memory limit are notes).
    /// Where the run's time went, per scenario (one line on stderr).
    static func reportTime(_ report: RunReport) {
        if let summary = report.timeSummary { Terminal.note("time: \(summary)") }
    }

    static func reportCasesThatDidNotComplete(_ report: RunReport) {
        for result in report.scenarios.flatMap(\.cases) where result.status != .ok {
            if result.status == .killedByMemoryLimit {
                Terminal.note("memory limit: \(result.label): \(result.failure ?? "")")
            } else {
                Terminal.error("\(result.label): \(result.status.rawValue): \(result.failure ?? "")")
            }
        }
    }

    /// Shows the run's warnings and exits with its status; a signal that came once the report was in place
    /// still ends the command with 128 + its number, saying the report is complete.
    static func finish(_ outcome: RunOutcome, folder: String) throws {
        for warning in outcome.warnings { Terminal.note("warning: \(warning)") }
        if let signal = Interruption.signal {
            throw Terminal.fail(
                "interrupted by \(SignalNames.name(of: signal)) after the report was written: \(folder) holds the "
                    + "complete run", status: .interrupted(signal: signal))
        }
        if outcome.status != .ok { throw ExitCode(outcome.status.code) }
    }

    /// A reading without Markdown's backticks, for the terminal.
    static func plain(_ text: String) -> String { text.replacingOccurrences(of: "`", with: "") }

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

/// Progress on stderr while cases run: the running case with its elapsed time, then one line per
/// finished case. Redrawn in place on an interactive terminal; with `--verbose` plain lines anywhere.
final class ProgressDisplay: Sendable {
    private let interactive: Bool
    private let verbose: Bool

    init(quiet: Bool, verbose: Bool) {
        interactive = !quiet && Terminal.stderrIsInteractive
        self.verbose = verbose
    }

    func show(_ event: RunEvent) {
        switch event {
        case .started(let index, let total, let spec):
            if interactive { Terminal.progress("[\(index)/\(total)] \(spec.label) …") }
        case .finished(let index, let total, let result, let elapsed):
            guard interactive || verbose else { return }
            let seconds = Units.fixed(Double(elapsed) / 1e9, decimals: 1)
            let outcome =
                result.completed.map { "peak \(Units.formatBytes($0.peakAllocatedNetBytes))" }
                ?? "\(result.status.rawValue): \(result.failure ?? "")"
            Terminal.note("[\(index)/\(total)] \(result.label) \(seconds) s, \(outcome)")
        case .resumed(let index, let total, let result):
            guard interactive || verbose else { return }
            Terminal.note("[\(index)/\(total)] \(result.label) finished before the interruption (resumed)")
        }
    }

    /// Clears the progress line.
    func end() { Terminal.clearProgress() }
}
