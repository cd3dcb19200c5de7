import Foundation
import HarnessModel
import TestSupport
import Testing

#if os(Linux)
    import Glibc
#endif

/// The malformed-input corpus end to end, through the built binary: for every category an input
/// shows its exact message (with file:line:column when the problem is in a file), at most ten lines
/// of stderr, the documented exit status, no trap, and no case run and no report written before the
/// input was refused. Every child process has a time limit: a hang is a failure, not a stuck test.
@Suite(.serialized, .timeLimit(.minutes(5)))
final class MalformedCommandLineTests {
    typealias Outcome = ChildRun

    /// Runs the binary for at most `seconds`, then kills it.
    static func memharness(_ arguments: [String], seconds: Double = 60) throws -> Outcome {
        var environment = ProcessInfo.processInfo.environment
        environment["GITHUB_ACTIONS"] = nil
        environment["GITHUB_STEP_SUMMARY"] = nil
        return try ChildRun.run(
            CommandLineTests.binary, arguments, environment: environment, timeout: .seconds(seconds))
    }

    /// A scenario that runs in well under a second, for the inputs that must be accepted.
    static let scenario = """
        scenario: corpus
        workload: calibration
        parameters:
          holdSize: 1MiB
          churnOperations: 1000
        strategies:
          - hold-large
          - churn
        steps:
          - allocate
          - release
        repetitions: 1
        settle: 0ms

        """

    let folder: String

    init() throws {
        folder =
            FileManager.default.temporaryDirectory.appendingPathComponent("memharness-corpus-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    // Each test has an instance of its own: its folder goes with it.
    deinit { try? FileManager.default.removeItem(atPath: folder) }

    func write(_ text: String, _ name: String) throws -> String {
        let path = "\(folder)/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Checks what every refusal must be: the status, the message, short, before any case.
    func expectRefused(
        _ outcome: Outcome, status: Int32 = 64, _ message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!outcome.timedOut, "hung", sourceLocation: sourceLocation)
        #expect(outcome.status == status, "\(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(!outcome.stderr.contains("Fatal error"), sourceLocation: sourceLocation)
        let lines = outcome.stderr.split(separator: "\n")
        #expect(lines.count <= 10, "\(lines.count) lines", sourceLocation: sourceLocation)
        #expect(
            !lines.contains { $0.hasPrefix("[1/") }, "a case ran before the input was refused",
            sourceLocation: sourceLocation)
    }

    /// A valid report folder, written by a real run.
    func reportFolder() throws -> String {
        let out = "\(folder)/report"
        let outcome = try Self.memharness(["run", try write(Self.scenario, "corpus.yaml"), "--out", out, "--quiet"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        return out
    }

    // MARK: Scenario files

    @Test func scenarioProblemsExit64AtTheirPlace() throws {
        let cases: [(String, String)] = [
            (
                "thresholds:\n  churn:\n    metrics.bogus: <= 5\n",
                ":16:5: unknown metric 'bogus' in 'metrics.bogus'; the workload's metrics: heldBytes, operations"
            ),
            (
                "thresholds:\n  churn:\n    metrics.heldBytes: <= nan\n",
                ":16:24: bad limit 'nan' for metrics.heldBytes; expected a number"
            ),
            ("thresholds:\n  - churn.peakAllocated <= inf * hold-large.peakAllocated\n", ":15:5: bad factor 'inf'"),
            ("scenario: again\n", ":14:1: duplicate key 'scenario' (first at line 1, column 1)"),
            // A warning without a unit is ambiguous (`0.8` was once a warning at 1 byte).
            (
                "memoryLimit: 300MiB\nmemoryWarning: 0.8\n",
                ":15:16: 'memoryWarning' '0.8' has no unit, so it could be a share of the limit or a number of bytes; "
                    + "write a percentage such as 80% (1%...100%) or a size such as 200MiB (B, KiB, MiB, GiB, TiB)"
            ),
            // A share with no limit to take it from is found after parsing, and named at the file's key.
            ("memoryWarning: 80%\n", ":14:1: the memory warning is 80% of the limit, but there is no memory limit"),
            (
                "lol: &l [x, x]\n"
                    + (1...40).map {
                        "l\($0): &l\($0) [*\($0 == 1 ? "l" : "l\($0 - 1)"), *\($0 == 1 ? "l" : "l\($0 - 1)")]\n"
                    }.joined() + "? *l40\n: boom\n",
                ":28:18: alias '*l13' expands the document beyond 100000 nodes (32767 here)"
            ),
            (
                "deep: " + String(repeating: "[", count: 200) + String(repeating: "]", count: 200) + "\n",
                ":14:38: nested deeper than 32 levels"
            ),
        ]
        for (index, (extra, message)) in cases.enumerated() {
            let file = try write(Self.scenario + extra, "s\(index).yaml")
            let out = "\(folder)/out\(index)"
            let outcome = try Self.memharness(["run", file, "--out", out, "--verbose"])
            expectRefused(outcome, file + message)
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    @Test func twoFilesOfOneScenarioNameExit64AtTheSecondsScenarioKey() throws {
        let first = try write(Self.scenario, "first.yaml")
        let second = try write("# the same scenario again\n\n" + Self.scenario, "second.yaml")
        let outcome = try Self.memharness(["run", first, second, "--out", "\(folder)/out"])
        expectRefused(outcome, "\(second):3:1: scenario name 'corpus' is also used by \(first); names must be unique")
    }

    @Test func aDuplicateKeyInABigFileIsOneShortLine() throws {
        let filler = (0..<8_000).map { "# filler line \($0) " + String(repeating: "x", count: 60) + "\n" }.joined()
        let file = try write(Self.scenario + filler + "scenario: again\n", "big.yaml")
        let outcome = try Self.memharness(["run", file, "--out", "\(folder)/out"])
        expectRefused(outcome, "\(file):8014:1: duplicate key 'scenario' (first at line 1, column 1)")
        #expect(outcome.stderr.utf8.count < 300)
    }

    @Test func directoriesFIFOsDevicesAndOtherTextAreRefused() throws {
        let directory = "\(folder)/dir.yaml"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fifo = "\(folder)/fifo.yaml"
        #expect(mkfifo(fifo, 0o600) == 0)
        let latin1 = "\(folder)/latin1.yaml"
        #expect(FileManager.default.createFile(atPath: latin1, contents: Data([0x73, 0x3A, 0x20, 0xE9, 0x0A])))
        let cases = [
            (directory, "\(directory): is a directory; expected a scenario file"),
            (fifo, "\(fifo): is a FIFO; expected a scenario file"),
            ("/dev/zero", "/dev/zero: is a device or other special file; expected a scenario file"),
            (
                "\(folder)/missing.yaml",
                "\(folder)/missing.yaml: cannot read the scenario file: No such file or directory"
            ),
            (
                latin1,
                "\(latin1): is not UTF-8 text (byte 4 is not part of a UTF-8 character); expected a scenario file"
            ),
        ]
        for (path, message) in cases {
            expectRefused(try Self.memharness(["run", path, "--out", "\(folder)/out"]), message)
        }
        let text = Self.scenario + "# " + String(repeating: "x", count: 1 << 20) + "\n"
        let big = try write(text, "big.yaml")
        expectRefused(
            try Self.memharness(["run", big, "--out", "\(folder)/out"]),
            "\(big): the scenario file is \(text.utf8.count) bytes (1.00 MiB); the largest read is 1048576 bytes")
    }

    // MARK: Options

    @Test func badOptionsExit64BeforeAnyCase() throws {
        let file = try write(Self.scenario, "ok.yaml")
        let repeating = try write(
            Self.scenario.replacingOccurrences(
                of: "  - allocate\n  - release\n",
                with: "  - repeat: {times: 6, warmup: 2, steps: [allocate, release]}\n"),
            "repeat.yaml")
        let cases: [([String], String)] = [
            (["run", file, "--timeout", "0s"], "--timeout 0ns is out of range; allowed: 100ms...3600s"),
            (["run", file, "--repeat", "0"], "--repeat 0 is out of range; allowed: 1...100"),
            // A negative value is read as one, not taken for an option ("Missing value"), and named as negative.
            (["run", file, "--repeat", "-1"], "--repeat -1 is negative; allowed: 1...100, or auto"),
            (["run", file, "--interval", "-1ms"], "--interval -1ms is negative; allowed: 0ms (off) or 50us...10s"),
            (["run", file, "--timeout", "-5s"], "--timeout -5s is negative; allowed: 100ms...3600s"),
            (
                ["run", file, "--memory-warning", "0.8"],
                "--memory-warning '0.8' has no unit, so it could be a share of the limit or a number of bytes; "
                    + "write a percentage such as 80% (1%...100%) or a size such as 200MiB"
            ),
            (["run", file, "--interval", "nan"], "The value 'nan' is invalid for '--interval <duration>'"),
            (["run", file, "--tolerance", "nan"], "The value 'nan' is invalid for '--tolerance <percent>'"),
            (["run", file, "--set", "holdSize=nan"], "--set 'holdSize=nan': bad value 'nan' for 'holdSize'"),
            (
                ["run", file, "--set", "holdSize=1MiB,1e400"],
                "--set 'holdSize=1e400': bad value '1e400' for 'holdSize'"
            ),
            (
                ["run", repeating, "--set", "repeat.times=4"],
                "--set 'repeat.times=4': \(repeating): 'repeat' runs 4 iterations with 2 of warm-up, leaving 2"
            ),
            (
                ["run", file, "--memory-warning", "80%"],
                "\(file): the memory warning is 80% of the limit, but there is no memory limit"
            ),
        ]
        for (arguments, message) in cases {
            expectRefused(try Self.memharness(arguments + ["--out", "\(folder)/out", "--verbose"]), message)
        }
        for (option, value) in [("--repeat", "-1"), ("--interval", "-1ms"), ("--timeout", "-1s")] {
            let outcome = try Self.memharness(["profile", "--out", "\(folder)/out", option, value, "--", "/bin/true"])
            expectRefused(outcome, "\(option) \(value) is negative; allowed: ")
        }
    }

    @Test func helpForAnUnknownSubcommandExits64NamingTheValidOnes() throws {
        expectRefused(
            try Self.memharness(["help", "frobnicate"]),
            "help: unknown subcommand 'frobnicate' of 'memharness'; expected one of: run, profile, report, compare, "
                + "baseline, merge, list")
        expectRefused(
            try Self.memharness(["help", "baseline", "sav"]),
            "help: unknown subcommand 'sav' of 'memharness baseline'; expected one of: save")
        let known = try Self.memharness(["help", "run"])
        #expect(known.status == 0 && known.stdout.contains("USAGE: memharness run"), "\(known.stderr)")
    }

    @Test func helpAndUsageNameTheExecutableTheUserRuns() throws {
        let link = "\(folder)/json-cache-harness"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: CommandLineTests.binary)
        let help = try ChildRun.run(link, ["help", "run"], timeout: .seconds(60))
        #expect(help.status == 0 && help.stdout.contains("USAGE: json-cache-harness run"), "\(help.stdout)")
        #expect(!help.stdout.contains("memharness run"), "\(help.stdout)")
        expectRefused(
            try ChildRun.run(link, ["help", "frobnicate"], timeout: .seconds(60)),
            "help: unknown subcommand 'frobnicate' of 'json-cache-harness'")
        let usage = try ChildRun.run(link, ["run", "--frobnicate"], timeout: .seconds(60))
        #expect(usage.status == 64 && usage.stderr.contains("json-cache-harness run"), "\(usage.stderr)")
    }

    @Test func anOptionProfileDoesNotKnowBeforeTheProgramIsRefusedAsAnOption() throws {
        for arguments in [["--frobnicate", "--", "/bin/true"], ["--frobnicate", "/bin/true"]] {
            let outcome = try Self.memharness(["profile", "--out", "\(folder)/out"] + arguments)
            expectRefused(outcome, "unknown option '--frobnicate' of profile (before the program's --); its options: ")
            #expect(outcome.stderr.contains("--out") && outcome.stderr.contains("--peak"), "\(outcome.stderr)")
            #expect(!outcome.stderr.contains("no such program"), "\(outcome.stderr)")
        }
        // After `--` an option is the program's own.
        let run = try Self.memharness(["profile", "--out", "\(folder)/out", "--", "/bin/echo", "--frobnicate"])
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test func withStdoutAPipeTheCheckTableKeepsTo120ColumnsAndNothingIsCut() throws {
        let name = "a-scenario-whose-name-is-long-enough-to-widen-every-check-row-past-100-columns"
        let file = try write(
            Self.scenario.replacingOccurrences(of: "scenario: corpus", with: "scenario: \(name)")
                + "thresholds:\n  all:\n    residue: <= 64MiB\n", "wide.yaml")
        let outcome = try Self.memharness(["run", file, "--out", "\(folder)/out"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // The long name goes under each row; the rest of the row stays in its columns.
        #expect(outcome.stdout.contains("\n      Scenario: \(name)\n"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("hold-large.residue <= 64MiB"), "\(outcome.stdout)")
        #expect(!outcome.stdout.contains("…"), "\(outcome.stdout)")
        let table = outcome.stdout.split(separator: "\n").drop { !$0.hasPrefix("Checks") }
        // ✅ and ❌ take two columns each.
        let widest = table.map { $0.count + $0.filter { $0 == "✅" || $0 == "❌" }.count }.max() ?? 0
        #expect(table.count > 3 && widest <= 120, "\(outcome.stdout)")
    }

    @Test func shardAutoWithoutACIEngineExits64NamingTheVariables() throws {
        let file = try write(Self.scenario, "ok.yaml")
        var environment = ProcessInfo.processInfo.environment
        for name in [
            "CI_NODE_INDEX", "CI_NODE_TOTAL", "BUILDKITE_PARALLEL_JOB", "CIRCLE_NODE_INDEX", "JOB_COMPLETION_INDEX",
        ] {
            environment[name] = nil
        }
        let refused = try ChildRun.run(
            CommandLineTests.binary, ["run", file, "--out", "\(folder)/out", "--shard", "auto"],
            environment: environment, timeout: .seconds(60))
        expectRefused(refused, "--shard auto: no CI engine says which parallel job this is")
        environment["CIRCLE_NODE_INDEX"] = "1"
        environment["CIRCLE_NODE_TOTAL"] = "2"
        let second = try ChildRun.run(
            CommandLineTests.binary, ["run", file, "--out", "\(folder)/out", "--shard", "auto"],
            environment: environment, timeout: .seconds(120))
        #expect(second.status == 0, "\(second.stderr)")
        // Two strategies of one repetition: CircleCI's second node (index 1 of 2) runs the second case only.
        let summary = try String(contentsOfFile: "\(folder)/out/summary.csv", encoding: .utf8)
        #expect(summary.contains(",churn,") && !summary.contains(",hold-large,"), "\(summary)")
    }

    @Test func outputsThatCannotBeWrittenExit64BeforeAnyCase() throws {
        let file = try write(Self.scenario, "ok.yaml")
        let mine = "\(folder)/mine"
        try FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: true)
        _ = try write("notes", "mine/notes.txt")
        var cases: [([String], String)] = [
            (["--out", "/etc/passwd/report"], "cannot write /etc/passwd/report: /etc/passwd is a file, not a folder"),
            (
                ["--out", "/proc/memharness-report"],
                "cannot write /proc/memharness-report: cannot create files in /proc"
            ),
            (["--out", file], "\(file) is not a report folder (it is a file)"),
            (["--out", mine], "\(mine) is not a report folder (it holds 1 entries and no run.json)"),
            (
                ["--out", "\(folder)/out", "--junit", "/etc/passwd/junit.xml"],
                "cannot write /etc/passwd/junit.xml: /etc/passwd is a file"
            ),
            (["--out", "\(folder)/out", "--json", folder], "--json \(folder) is a folder; expected a file name"),
        ]
        // Permission bits do not stop root, so a read-only folder is only a case for other users.
        if geteuid() != 0 {
            let readOnly = "\(folder)/read-only"
            try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: true)
            chmod(readOnly, 0o555)
            cases.append((["--out", "\(readOnly)/report"], "cannot create files in \(readOnly): Permission denied"))
        }
        for (arguments, message) in cases {
            expectRefused(try Self.memharness(["run", file, "--verbose"] + arguments), message)
        }
        #expect(!FileManager.default.fileExists(atPath: "\(folder)/out"))
        #expect(FileManager.default.fileExists(atPath: "\(mine)/notes.txt"), "the user's folder is untouched")
        let report = try reportFolder()
        expectRefused(
            try Self.memharness(["merge", report, "--out", "/etc/passwd/merged"]),
            "cannot write /etc/passwd/merged: /etc/passwd is a file")
        expectRefused(
            try Self.memharness(["baseline", "save", "--from", report, "--output", "/proc/x/b.json"]),
            "cannot write /proc/x/b.json: cannot create files in /proc")
    }

    // MARK: Baselines

    @Test func badBaselinesExit64AtTheirPlace() throws {
        let file = try write(Self.scenario, "ok.yaml")
        let valid = """
            {
              "cases" : {
                "corpus/churn" : {
                  "peakAllocated" : 552944
                }
              },
              "format" : "memharness-baseline/1",
              "name" : "default"
            }

            """
        let cases: [(String, String)] = [
            ("hello", ":1:1: not a memharness baseline: unexpected 'h'; expected a value"),
            (
                valid.replacingOccurrences(of: "552944", with: "NaN"),
                ":4:25: not a memharness baseline: unexpected 'N'; expected a value"
            ),
            (
                valid.replacingOccurrences(of: "552944", with: "1e400"),
                ":4:25: not a memharness baseline: the number 1e400 is out of range"
            ),
            (
                valid.replacingOccurrences(of: "552944", with: "-5"),
                ":4:25: corpus/churn peakAllocated is -5.0; expected a whole, non-negative number of bytes"
            ),
            (
                valid.replacingOccurrences(of: "\"name\"", with: "\"format\""),
                ":8:3: not a memharness baseline: duplicate key 'format' (first at line 7)"
            ),
            (
                valid.replacingOccurrences(of: "peakAllocated", with: "peakAlocated"),
                ":4:7: unknown figure 'peakAlocated' for corpus/churn; a baseline holds peakAllocated, exactPeak "
                    + "(did you mean 'peakAllocated'?)"
            ),
            (
                valid.replacingOccurrences(of: "\"peakAllocated\" : 552944", with: "\"peakAllocated\" : \"big\""),
                ":4:25: not a memharness baseline: unexpected value at cases.corpus/churn.peakAllocated"
            ),
            (
                valid.replacingOccurrences(of: "corpus/churn", with: "other/churn"),
                "holds no figures for the scenario of this run (corpus); it covers other"
            ),
            (String(repeating: "[", count: 100_000), ":1:65: not a memharness baseline: nested deeper than 64 levels"),
        ]
        for (index, (text, message)) in cases.enumerated() {
            let baseline = try write(text, "b\(index).json")
            expectRefused(
                try Self.memharness(["run", file, "--baseline", baseline, "--out", "\(folder)/out", "--verbose"]),
                message)
        }
        let directory = "\(folder)/baseline-dir.json"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        expectRefused(
            try Self.memharness(["run", file, "--baseline", directory, "--out", "\(folder)/out"]),
            "\(directory): is a directory; expected a baseline file")
        #expect(!FileManager.default.fileExists(atPath: "\(folder)/out"))
        // The same baseline, valid: the run goes ahead and compares.
        let good = try write(valid, "good.json")
        let accepted = try Self.memharness(["run", file, "--baseline", good, "--out", "\(folder)/out", "--quiet"])
        #expect([0, 2].contains(accepted.status), "\(accepted.stderr)")
        #expect(accepted.stdout.contains("churn.peakAllocated vs baseline"))
    }

    // MARK: Report folders

    @Test func damagedReportFoldersExit64AtTheirLine() throws {
        let report = try reportFolder()
        let record = try String(contentsOfFile: "\(report)/run.json", encoding: .utf8)
        let baseline = try write(
            "{\"cases\": {\"corpus/churn\": {\"peakAllocated\": 5}}, \"format\": \"memharness-baseline/1\", "
                + "\"name\": \"b\"}",
            "b.json")
        func damaged(_ text: String) throws -> String {
            let copy = "\(folder)/damaged-\(UUID().uuidString)"
            try FileManager.default.copyItem(atPath: report, toPath: copy)
            try text.write(toFile: "\(copy)/run.json", atomically: true, encoding: .utf8)
            return copy
        }
        let schema = try damaged(record.replacingOccurrences(of: "memharness-run/2", with: "memharness-run/1"))
        let truncated = try damaged(String(record.prefix(3000)))
        let huge = try damaged(
            record.replacingOccurrences(
                of: "\"baselineAllocatedBytes\" : ", with: "\"baselineAllocatedBytes\" : -9223372036854775808 + "))
        let rows = try damaged(
            record.replacingOccurrences(of: "\"samplesMaxRows\" : 2000", with: "\"samplesMaxRows\" : -5"))
        // The line of the schema's value (the record's last key, "schema" : "...", at column 14).
        let schemaLine =
            try #require(
                record.split(separator: "\n", omittingEmptySubsequences: false).firstIndex {
                    $0.contains("\"memharness-run/2\"")
                }) + 1
        for command in [["report"], ["compare", "--baseline", baseline]] {
            let arguments = { (folder: String) in [command[0], folder] + command.dropFirst() }
            expectRefused(
                try Self.memharness(arguments(schema)),
                "\(schema)/run.json:\(schemaLine):14: schema 'memharness-run/1' is not memharness-run/2: written by "
                    + "another version")
            expectRefused(try Self.memharness(arguments(truncated)), "\(truncated)/run.json:")
            expectRefused(try Self.memharness(arguments(huge)), "is beyond ±9007199254740992")
            expectRefused(try Self.memharness(arguments(rows)), "samplesMaxRows is -5; expected 0 (keep all) or more")
        }
        expectRefused(try Self.memharness(["report", "\(folder)/nothing"]), "\(folder)/nothing: no such folder")
        let other = try write(
            "{\"cases\": {\"other/x\": {\"peakAllocated\": 5}}, \"format\": \"memharness-baseline/1\", "
                + "\"name\": \"b\"}",
            "other.json")
        expectRefused(
            try Self.memharness(["compare", report, "--baseline", other]), "\(other) holds no figures for the scenario")
    }
}
