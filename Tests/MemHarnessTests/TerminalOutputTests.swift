import Foundation
import Testing

@testable import MemHarness

/// What people see: escape codes only where they are wanted, and a check table within 100 columns.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct TerminalOutputTests {
    let cli = CommandLineTests()

    @Test func noColorTurnsEscapeCodesOffOnlyWhenItHasAValue() {
        // no-color.org: "when present and not an empty string".
        #expect(Terminal.takesEscapeCodes(isTerminal: true, environment: [:]))
        #expect(Terminal.takesEscapeCodes(isTerminal: true, environment: ["NO_COLOR": ""]))
        #expect(!Terminal.takesEscapeCodes(isTerminal: true, environment: ["NO_COLOR": "1"]))
        #expect(!Terminal.takesEscapeCodes(isTerminal: true, environment: ["NO_COLOR": "0"]))
        #expect(!Terminal.takesEscapeCodes(isTerminal: true, environment: ["TERM": "dumb"]))
        #expect(!Terminal.takesEscapeCodes(isTerminal: false, environment: [:]))
    }

    /// Runs the binary with `arguments` on a pseudo-terminal (util-linux `script`, as a person at a terminal
    /// would), with `environment` added; returns what the terminal received.
    func onTerminal(_ arguments: [String], environment: [String: String]) throws -> String {
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let command = ([CommandLineTests.binary] + arguments).joined(separator: " ")
        process.arguments = ["-q", "-e", "-c", command, "\(directory)/typescript"]
        var variables = ProcessInfo.processInfo.environment
        variables["GITHUB_ACTIONS"] = nil
        variables["GITHUB_STEP_SUMMARY"] = nil
        variables.merge(environment) { _, new in new }
        process.environment = variables
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()  // bounded by the suite's time limit
        return String(decoding: try Data(contentsOf: URL(fileURLWithPath: "\(directory)/typescript")), as: UTF8.self)
    }

    @Test func progressIsRedrawnOnATerminalUnlessNoColorSaysOtherwise() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let fixture = CommandLineTests.fixtures.appendingPathComponent("gate.yaml").path
        let clear = "\r\u{1B}[2K"
        let empty = try onTerminal(
            ["run", fixture, "--out", "\(out)/a"], environment: ["NO_COLOR": "", "TERM": "xterm"])
        #expect(empty.contains(clear), "an empty NO_COLOR does not count: \(empty)")
        #expect(empty.contains("[2/2] gate / churn #1"))
        let set = try onTerminal(
            ["run", fixture, "--out", "\(out)/b"], environment: ["NO_COLOR": "1", "TERM": "xterm"])
        #expect(set.contains("Report: \(out)/b/report.md"), "it ran: \(set)")
        #expect(!set.contains("\u{1B}"), "no escape code at all with NO_COLOR=1: \(set)")
        let quiet = try onTerminal(
            ["run", fixture, "--out", "\(out)/c", "--quiet"], environment: ["NO_COLOR": "", "TERM": "xterm"])
        #expect(quiet.contains("Report: \(out)/c/report.md"), "it ran: \(quiet)")
        #expect(!quiet.contains("\u{1B}") && !quiet.contains("[1/2]"), "--quiet: no progress: \(quiet)")
    }

    @Test func onATerminalTheCheckTableFits100ColumnsAndThroughAPipeNothingIsCut() throws {
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A scenario file deep enough that its place alone makes a failure message longer than a line.
        let folder = "\(directory)/a-rather-long-folder-name-for-scenario-files/and-a-second-level-below-that-one"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file = "\(folder)/gate-absolute.yaml"
        try FileManager.default.copyItem(
            atPath: CommandLineTests.fixtures.appendingPathComponent("gate-absolute.yaml").path, toPath: file)
        let place = "see the `gate-absolute` section of report.md and \(file):16"
        // On a terminal: every line within 100 columns, the failure message wrapped but whole.
        let terminal = try onTerminal(
            ["run", file, "--out", "\(directory)/report", "--quiet"], environment: ["TERM": "xterm"])
        let lines = terminal.split(whereSeparator: \.isNewline)
        let table = try #require(lines.firstIndex { $0.hasPrefix("Report: ") }) + 1
        #expect(lines[table...].filter { $0.hasPrefix("FAIL: ") }.count == 1, "\(terminal)")
        let message = lines[table...].drop { !$0.hasPrefix("FAIL: ") }.joined(separator: "\n")
        #expect(message.count > 100, "the message needs wrapping, or this test shows nothing")
        for line in lines[table...] { #expect(line.count <= 100, "\(line.count) columns: \(line)") }
        #expect(terminal.filter { !$0.isWhitespace }.contains(place.filter { !$0.isWhitespace }))
        // Through a pipe (a CI log, a file): no width to keep to, so nothing is cut or wrapped.
        let piped = try cli.memharness(["run", file, "--out", "\(directory)/piped", "--quiet"])
        #expect(piped.status == 2, "\(piped.stderr)")
        #expect(!piped.stdout.contains("…"), "\(piped.stdout)")
        #expect(piped.stdout.split(separator: "\n").contains { $0.hasPrefix("FAIL: ") && $0.hasSuffix(place) })
    }

    @Test func profileTakesQuietAndVerboseLikeRun() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let verbose = try cli.memharness(["profile", "--out", "\(out)/v", "--verbose", "--", "/bin/true"])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stderr.contains("[1/1] true / true #1 "), "a line per finished run: \(verbose.stderr)")
        // memharness's own lines go to stderr (stdout is the program's): without a terminal, no progress, the summary
        // and where the report is; --quiet, only where the report is.
        let plain = try cli.memharness(["profile", "--out", "\(out)/p", "--", "/bin/true"])
        #expect(plain.status == 0 && plain.stdout.isEmpty && !plain.stderr.contains("[1/1]"), "\(plain.stderr)")
        #expect(plain.stderr.contains("true / true #1: peak allocated ") && plain.stderr.contains("Report: \(out)/p/"))
        let quiet = try cli.memharness(["profile", "--out", "\(out)/q", "--quiet", "--", "/bin/true"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty)
        #expect(quiet.stderr == "Report: \(out)/q/report.md\n", "\(quiet.stderr)")
        let both = try cli.memharness(["profile", "--quiet", "--verbose", "--", "/bin/true"])
        #expect(both.status == 64)
        #expect(both.stderr.contains("--quiet and --verbose contradict each other; give one"))
        let help = try cli.memharness(["profile", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--verbose") && help.stdout.contains("--quiet"))
    }
}
