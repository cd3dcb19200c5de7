import ArgumentParser
import FileIO
import Foundation
import HarnessModel
import Reports
import Runner
import Scenarios
import Synchronization

/// Where the command line talks to people: results on stdout, progress, warnings and errors on stderr, each
/// write a whole line (a progress line being redrawn is cleared first), so the two never interleave mid-line.
enum Terminal {
    /// The progress line on stderr being redrawn in place, if any.
    private static let progressLine = Mutex<Bool>(false)

    /// True when stderr is a terminal that takes escape codes.
    static var stderrIsInteractive: Bool {
        takesEscapeCodes(isTerminal: isatty(STDERR_FILENO) == 1, environment: ProcessInfo.processInfo.environment)
    }

    /// True when a terminal (`isTerminal`) takes escape codes in `environment`: not when `TERM` is `dumb`, nor
    /// when `NO_COLOR` is set to anything but the empty string (no-color.org: an empty value does not count).
    static func takesEscapeCodes(isTerminal: Bool, environment: [String: String]) -> Bool {
        isTerminal && environment["TERM"] != "dumb" && (environment["NO_COLOR"] ?? "").isEmpty
    }

    /// A result line (or lines) on stdout.
    static func result(_ text: String) { emit(text.hasSuffix("\n") ? text : text + "\n", to: STDOUT_FILENO) }

    /// A note on stderr.
    static func note(_ text: String) { emit(text + "\n", to: STDERR_FILENO) }

    /// `error: message` on stderr, one line per line of the message, at most 10 lines of 600 characters.
    static func error(_ message: String) {
        emit(Excerpt.lines(of: message).map { "error: \($0)\n" }.joined(), to: STDERR_FILENO)
    }

    /// Writes whole lines, the progress line cleared first.
    private static func emit(_ lines: String, to descriptor: Int32) {
        clearProgress()
        ProcessStart.write(lines, to: descriptor)
    }

    /// Prints `message` as an error and returns the exit code to throw for `status`.
    static func fail(_ message: String, status: ExitStatus) -> ExitCode {
        error(message)
        return ExitCode(status.code)
    }

    /// Ends the command with the usage status (or `status`) and `problem`, if there is one.
    static func check(_ problem: String?, status: ExitStatus = .usage) throws {
        if let problem { throw fail(problem, status: status) }
    }

    /// Runs `body`; an error of it is shown and ends the command with the error's exit status.
    static func orFail<Value, Failure: StatusError>(_ body: () throws(Failure) -> Value) throws -> Value {
        do { return try body() } catch { throw fail(error.description, status: error.exitStatus) }
    }

    /// Redraws the progress line (interactive stderr only).
    static func progress(_ text: String) {
        guard stderrIsInteractive else { return }
        progressLine.withLock { active in
            ProcessStart.write("\r\u{1B}[2K" + text, to: STDERR_FILENO)
            active = true
        }
    }

    /// Ends the progress line, if one is showing.
    static func clearProgress() {
        progressLine.withLock { active in
            guard active else { return }
            ProcessStart.write("\r\u{1B}[2K", to: STDERR_FILENO)
            active = false
        }
    }
}

/// An error that says which exit status it ends the command with.
protocol StatusError: Error, CustomStringConvertible {
    var exitStatus: ExitStatus { get }
}

extension ReportError: StatusError {}
extension ScenarioError: StatusError {
    /// A scenario or suppressions file that cannot be used is a usage error.
    var exitStatus: ExitStatus { .usage }
}
extension RunSessionError: StatusError {}
extension ProgramProblem: StatusError {
    /// A program `profile` cannot run is a usage error.
    var exitStatus: ExitStatus { .usage }
}

/// What a command prints and writes besides the report folder (`Publication` makes it), and how it ends.
enum Publishing {
    /// The readings and checks on stdout, the `--junit`/`--json` files, GitHub's annotations and step summary.
    static func publish(_ record: RunRecord, folder: String, gate: GateOptions) throws {
        let environment = ProcessInfo.processInfo.environment
        let publication = Publication(
            record, folder: folder, junit: gate.junit, json: gate.json, environment: environment,
            width: stdoutColumns())
        Terminal.result(publication.results)
        try Terminal.orFail { () throws(ReportError) in try publication.writeFiles() }
        if let annotations = publication.annotations { Terminal.result(annotations) }
        if let warning = publication.appendStepSummary() { Terminal.note("warning: \(warning)") }
    }

    /// The columns of the terminal stdout is, 100 when it does not say (a terminal of unknown size); nil when
    /// stdout is no terminal.
    static func stdoutColumns() -> Int? {
        guard isatty(STDOUT_FILENO) == 1 else { return nil }
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 100 }
        return Int(size.ws_col)
    }

    /// Publishes `verdict.record` and ends the command with the verdict's status.
    static func publish(_ verdict: GateVerdict, folder: String, gate: GateOptions) throws {
        try publish(verdict.record, folder: folder, gate: gate)
        if verdict.status != .ok { throw ExitCode(verdict.status.code) }
    }

    /// Runs `request` to its report and publishes it (`RunPublication`) while its folder is held, an error
    /// shown and ending the command; progress on stderr: the running case redrawn in place on an interactive
    /// terminal, a line per finished case there (or anywhere, with `--verbose`).
    /// `progressInPlace` false: no line redrawn in place (a program's own output passes through on the terminal).
    static func run(
        _ request: RunRequest, output: RunOutput, display: DisplayOptions, progressInPlace: Bool = true
    ) throws -> RunOutcome {
        let interactive = !display.quiet && Terminal.stderrIsInteractive && progressInPlace
        let folder = RunFolder(output.directory)
        defer { folder.release() }
        let report = try Terminal.orFail { () throws(RunSessionError) in
            defer { Terminal.clearProgress() }
            return try RunSession.run(
                request, catalog: CommandContext.catalog, launcher: ProcessCaseLauncher.forCurrentBinary(),
                folder: folder, baseline: output.baseline, toolVersion: MemHarness.version
            ) { event in
                if interactive, let line = event.progressLine { Terminal.progress(line) }
                if interactive || display.verbose, let line = event.endLine { Terminal.note(line) }
            }
        }
        // A signal before the new report is in place abandons it: the previous report stays as it was.
        let published = try Terminal.orFail { () throws(ReportError) in
            try RunPublication.publish(report, to: output, proceed: { Interruption.signal == nil })
        }
        guard let published else {
            let interrupted = RunSessionError.interrupted(publishing: report)
            throw Terminal.fail(interrupted.description, status: interrupted.exitStatus)
        }
        folder.reportPublished()
        return published
    }

    /// Shows the run's closing notices (`Publication.closingNotices`), then exits with its status; a signal
    /// that came once the report was in place still ends the command with 128 + its number.
    static func finish(_ outcome: RunOutcome, folder: String, showTime: Bool, quick: Bool = false) throws {
        let report = outcome.record.report
        for notice in Publication.closingNotices(report, warnings: outcome.warnings, showTime: showTime, quick: quick) {
            notice.isError ? Terminal.error(notice.text) : Terminal.note(notice.text)
        }
        if let signal = Interruption.signal {
            throw Terminal.fail(Interruption.afterReport(signal, folder: folder), status: .interrupted(signal: signal))
        }
        if outcome.status != .ok { throw ExitCode(outcome.status.code) }
    }
}
