import ArgumentParser
import Foundation
import HarnessModel
import Synchronization

/// Where the command line talks to people: results on stdout, progress, warnings and errors on
/// stderr, each write a whole line (a progress line being redrawn is cleared first), so the two never
/// interleave mid-line. No escape codes unless stderr is a terminal and neither `NO_COLOR` nor `TERM=dumb` says otherwise.
enum Terminal {
    /// The progress line on stderr being redrawn in place, if any.
    private static let progressLine = Mutex<Bool>(false)

    /// True when stderr is a terminal that takes escape codes.
    static var stderrIsInteractive: Bool {
        let environment = ProcessInfo.processInfo.environment
        return isatty(STDERR_FILENO) == 1 && environment["TERM"] != "dumb" && environment["NO_COLOR"] == nil
    }

    /// A result line (or lines) on stdout.
    static func result(_ text: String) {
        clearProgress()
        write(text.hasSuffix("\n") ? text : text + "\n", to: STDOUT_FILENO)
    }

    /// A note on stderr.
    static func note(_ text: String) {
        clearProgress()
        write(text + "\n", to: STDERR_FILENO)
    }

    /// `error: message` on stderr, one line per line of the message: at most `maximumErrorLines` lines of
    /// at most `maximumErrorLineCharacters` characters each. Messages are short at their source; this is
    /// the backstop that keeps a value nobody shortened from flooding a terminal or a CI log.
    static func error(_ message: String) {
        clearProgress()
        var lines = message.split(separator: "\n").map { line -> String in
            line.count > maximumErrorLineCharacters ? line.prefix(maximumErrorLineCharacters) + "…" : String(line)
        }
        if lines.count > maximumErrorLines {
            let hidden = lines.count - (maximumErrorLines - 1)
            lines = lines.prefix(maximumErrorLines - 1) + ["... \(hidden) more lines"]
        }
        write(lines.map { "error: \($0)\n" }.joined(), to: STDERR_FILENO)
    }

    static let maximumErrorLines = 10
    static let maximumErrorLineCharacters = 600

    /// Prints `message` as an error and returns the exit code to throw for `status`.
    static func fail(_ message: String, status: ExitStatus) -> ExitCode {
        error(message)
        return ExitCode(status.code)
    }

    /// Redraws the progress line (interactive stderr only).
    static func progress(_ text: String) {
        guard stderrIsInteractive else { return }
        progressLine.withLock { active in
            write("\r\u{1B}[2K" + text, to: STDERR_FILENO)
            active = true
        }
    }

    /// Ends the progress line, if one is showing.
    static func clearProgress() {
        progressLine.withLock { active in
            guard active else { return }
            write("\r\u{1B}[2K", to: STDERR_FILENO)
            active = false
        }
    }

    /// Writes all of `text` to a descriptor. A closed or full pipe loses the text, not the run: the
    /// report folder is the record, and SIGPIPE is ignored at start-up so the write just fails.
    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
