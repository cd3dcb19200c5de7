import FileIO
import Foundation
import HarnessModel
import MemHarness
import Reports
import TestSupport
import Testing

/// Drives the built `memharness` binary end to end.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct CommandLineTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static let neverWritten = "/tmp/memharness-never-written"

    /// The binary sits beside the test bundle in the build folder.
    static var binary: String { binary(named: "memharness") }

    /// A product of the package in the build folder (`make test` builds the agent and agent-probe first).
    static func binary(named name: String) -> String {
        let testBinary =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent(name).path
    }

    typealias Outcome = ChildRun

    /// Runs the binary for at most `seconds` (killed then, and the test fails); GitHub's variables of the
    /// test run are not passed on.
    func memharness(
        _ arguments: [String], environment: [String: String] = [:], binary: String = Self.binary,
        seconds: Double = 600, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Outcome {
        var childEnvironment = ProcessInfo.processInfo.environment
        // A test run inside GitHub Actions must not leak its own settings into the binary under test.
        childEnvironment["GITHUB_ACTIONS"] = nil
        childEnvironment["GITHUB_STEP_SUMMARY"] = nil
        for (key, value) in environment { childEnvironment[key] = value }
        let run = try ChildRun.run(binary, arguments, environment: childEnvironment, timeout: .seconds(seconds))
        if run.timedOut {
            Issue.record(
                "memharness \(arguments.joined(separator: " ")) ran past \(Int(seconds)) s and was killed",
                sourceLocation: sourceLocation)
        }
        return run
    }

    func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("memharness-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    @Test func aCrashingStrategyIsAFailedRowWhileTheOthersComplete() throws {
        let out = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let outcome = try memharness([
            "run", Self.fixtures.appendingPathComponent("calibration-with-crash.yaml").path, "--out", out,
        ])
        #expect(outcome.status == 1, "a crashed case is a harness failure: \(outcome.stderr)")
        #expect(outcome.stderr.contains("crash #1: crashed: killed by signal 6 (SIGABRT)"))

        let rows = CSVTable.parse(try String(contentsOfFile: "\(out)/summary.csv", encoding: .utf8))
        let header = try #require(rows.first)
        let status = try #require(header.firstIndex(of: "status"))
        let strategy = try #require(header.firstIndex(of: "strategy"))
        let net = try #require(header.firstIndex(of: "peak_allocated_net_bytes"))
        let byStrategy = Dictionary(uniqueKeysWithValues: rows.dropFirst().map { ($0[strategy], $0) })
        #expect(byStrategy["crash"]?[status] == "crashed")
        #expect(byStrategy["hold-large"]?[status] == "ok")
        #expect(byStrategy["churn"]?[status] == "ok")
        let floor = try #require(header.firstIndex(of: "peak_uncertainty_bytes"))
        // The sampled net peak sees the 8 MiB block within its stated floor.
        let holdPeak = Int(byStrategy["hold-large"]?[net] ?? "") ?? 0
        #expect(holdPeak >= (8 << 20) - (Int(byStrategy["hold-large"]?[floor] ?? "") ?? 0), "\(holdPeak) B")

        let report = try String(contentsOfFile: "\(out)/report.md", encoding: .utf8)
        #expect(report.contains("### Cases that did not complete"))
        #expect(report.contains("| `crash` | 1 | crashed | killed by signal 6 (SIGABRT)"))
        let samples = CSVTable.parse(try String(contentsOfFile: "\(out)/samples.csv", encoding: .utf8))
        #expect(samples.count > 20)
        #expect(samples.first == SamplesCSV.fixedColumns + ["gauge.heldBytes"])
    }

    @Test func aBadScenarioExits64BeforeAnyWorkAndKeepsTheEarlierReport() throws {
        let out = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let earlier = "# an earlier report\n"
        try earlier.write(toFile: "\(out)/report.md", atomically: true, encoding: .utf8)
        // A report folder has its record (only its presence counts here); one without is not replaced.
        try "{}\n".write(toFile: "\(out)/run.json", atomically: true, encoding: .utf8)
        let file = Self.fixtures.appendingPathComponent("broken.yaml").path
        let outcome = try memharness(["run", file, "--out", out])
        #expect(outcome.status == 64)
        #expect(
            outcome.stderr.contains("\(file):4:13: bad value '64XB' for 'holdSize'; expected a size with a binary unit")
        )
        #expect(
            outcome.stderr.contains(
                "\(file):6:5: unknown strategy 'hold-lrage'; expected one of: hold-large, hold-small-objects, "
                    + "churn, spikes, cross-thread, crash (did you mean 'hold-large'?)"
            ))
        #expect(try String(contentsOfFile: "\(out)/report.md", encoding: .utf8) == earlier)
        #expect(!FileManager.default.fileExists(atPath: "\(out)/summary.csv"))
    }

    @Test(arguments: [
        (["run", "--repeat", "0", "--out", Self.neverWritten], "--repeat 0 is out of range"),
        (["run", "--interval", "soon", "--out", Self.neverWritten], "--interval"),
        (["run", "no-such-scenario", "--out", Self.neverWritten], "no scenario file or name 'no-such-scenario'"),
        (["run", "--set", "holdSize", "calibration", "--out", Self.neverWritten], "expected NAME=VALUE"),
        (["frobnicate"], "Unexpected argument 'frobnicate'"),
    ])
    func usageErrorsExit64(arguments: [String], message: String) throws {
        let outcome = try memharness(arguments)
        #expect(outcome.status == 64, "\(arguments): \(outcome.stderr)")
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: Self.neverWritten))
    }

    @Test func listShowsWorkloadsWithDefaultsAndUnits() throws {
        let outcome = try memharness(["list"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.contains("calibration: Allocates known amounts"))
        #expect(outcome.stdout.contains("holdSize                   default 64.00 MiB, range 0 B...16.00 GiB."))
        #expect(outcome.stdout.contains("idle "))
    }

    @Test func helpMatchesGolden() throws {
        for (arguments, name) in [
            (["--help"], "help.txt"), (["run", "--help"], "run-help.txt"), (["profile", "--help"], "profile-help.txt"),
        ] {
            let outcome = try memharness(arguments)
            #expect(outcome.status == 0)
            let url = Self.fixtures.appendingPathComponent(name)
            if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
                try outcome.stdout.write(to: url, atomically: true, encoding: .utf8)
            }
            #expect(
                outcome.stdout == (try String(contentsOf: url, encoding: .utf8)),
                "\(name); rerun with UPDATE_GOLDEN=1 and review")
        }
        #expect(try memharness(["--version"]).stdout == "\(MemHarness.version)\n")
    }
}
