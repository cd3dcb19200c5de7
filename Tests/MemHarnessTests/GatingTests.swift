import Foundation
import HarnessModel
import Testing

/// The gate end to end: the binary's exit code, its messages and its JUnit output.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct GatingTests {
    let cli = CommandLineTests()

    func fixture(_ name: String) -> String {
        CommandLineTests.fixtures.appendingPathComponent(name).path
    }

    func junitFailures(_ path: String) throws -> Int {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.components(separatedBy: "<failure ").count - 1
    }

    @Test func aPassingGateExits0() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let outcome = try cli.memharness(["run", fixture("gate.yaml"), "--out", out, "--junit", "\(out)/junit.xml"])
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.stdout.contains("2 passed, 0 failed"))
        #expect(try junitFailures("\(out)/junit.xml") == 0)
        #expect(try String(contentsOfFile: "\(out)/report.md", encoding: .utf8).contains("## Checks"))
    }

    @Test func aBreachedAbsoluteThresholdExits2() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let file = fixture("gate-absolute.yaml")
        let outcome = try cli.memharness(["run", file, "--out", out, "--junit", "\(out)/junit.xml"])
        #expect(outcome.status == 2)
        #expect(outcome.unwrappedStdout.contains("FAIL: hold-large.peakAllocated = 4.0"))
        #expect(
            outcome.unwrappedStdout.contains("breaks `hold-large.peakAllocated <= 1MiB` (limit 1.00 MiB, off by -3"))
        #expect(outcome.unwrappedStdout.contains("see the `gate-absolute` section of report.md and \(file):16"))
        #expect(try junitFailures("\(out)/junit.xml") == 1)
    }

    @Test func aBreachedRelativeThresholdExits2() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let outcome = try cli.memharness([
            "run", fixture("gate-relative.yaml"), "--out", out, "--junit", "\(out)/junit.xml",
        ])
        #expect(outcome.status == 2)
        #expect(outcome.unwrappedStdout.contains("breaks `hold-large.peakAllocated <= 0.5 * churn.peakAllocated`"))
        #expect(try junitFailures("\(out)/junit.xml") == 1)
    }

    @Test func aRegressionBeyondToleranceExits2AndAnImprovementDoesNot() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        #expect(try cli.memharness(["run", fixture("gate.yaml"), "--out", "\(out)/run"]).status == 0)
        #expect(
            try cli.memharness(["baseline", "save", "--from", "\(out)/run", "--output", "\(out)/base.json"]).status == 0
        )
        #expect(try cli.memharness(["compare", "\(out)/run", "--baseline", "\(out)/base.json"]).status == 0)

        // Pretend the baseline was 2 MiB smaller (a regression now) or larger (an improvement now).
        var baseline = try JSONDecoder().decode(
            Baseline.self, from: Data(contentsOf: URL(fileURLWithPath: "\(out)/base.json")))
        let measured = try #require(baseline.cases["gate/hold-large"]?["peakAllocated"])
        baseline.cases["gate/hold-large"]?["peakAllocated"] = measured - 2 * 1_048_576
        try JSONEncoder().encode(baseline).write(to: URL(fileURLWithPath: "\(out)/lower.json"))
        let regression = try cli.memharness([
            "compare", "\(out)/run", "--baseline", "\(out)/lower.json", "--junit", "\(out)/junit.xml",
        ])
        #expect(regression.status == 2)
        #expect(regression.unwrappedStdout.contains("FAIL: gate / hold-large.peakAllocated regressed"))
        #expect(try junitFailures("\(out)/junit.xml") == 1)
        // Within the floor: the same 2 MiB change passes with a 4 MiB floor.
        #expect(
            try cli.memharness(["compare", "\(out)/run", "--baseline", "\(out)/lower.json", "--floor", "4MiB"]).status
                == 0)

        baseline.cases["gate/hold-large"]?["peakAllocated"] = measured + 2 * 1_048_576
        try JSONEncoder().encode(baseline).write(to: URL(fileURLWithPath: "\(out)/higher.json"))
        #expect(try cli.memharness(["compare", "\(out)/run", "--baseline", "\(out)/higher.json"]).status == 0)
        let strict = try cli.memharness([
            "compare", "\(out)/run", "--baseline", "\(out)/higher.json", "--fail-on-improvement",
        ])
        #expect(strict.status == 2)
        #expect(strict.stdout.contains("improved"))
    }

    @Test func aMalformedThresholdExits64BeforeAnyCaseRuns() throws {
        let out = try cli.temporaryDirectory()
        try FileManager.default.removeItem(atPath: out)
        let file = fixture("gate-malformed.yaml")
        let outcome = try cli.memharness(["run", file, "--out", out])
        #expect(outcome.status == 64)
        #expect(outcome.stderr.contains("\(file):16:5: unknown figure 'peakAlocated'; expected one of:"))
        #expect(outcome.stderr.contains("(did you mean 'peakAllocated'?)"))
        #expect(
            outcome.stderr.contains(
                "\(file):18:7: '=< 0.5 * hold-large.peakAllocated' needs a comparison first; expected one of: <=, "
                    + "<, >=, >, =="
            ))
        #expect(!FileManager.default.fileExists(atPath: out), "nothing ran, nothing was written")
    }

    @Test func shardsMergeIntoTheWholeRun() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        #expect(try cli.memharness(["run", fixture("gate.yaml"), "--shard", "1/2", "--out", "\(out)/a"]).status == 0)
        #expect(try cli.memharness(["run", fixture("gate.yaml"), "--shard", "2/2", "--out", "\(out)/b"]).status == 0)
        let merged = try cli.memharness(["merge", "\(out)/a", "\(out)/b", "--out", "\(out)/all"])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(merged.stdout.contains("2 passed, 0 failed"), "the relative threshold needs both shards")
        let summary = try String(contentsOfFile: "\(out)/all/summary.csv", encoding: .utf8)
        #expect(summary.contains("gate,calibration,hold-large,1,ok"))
        #expect(summary.contains("gate,calibration,churn,1,ok"))
    }

    @Test func githubOutputsAppearWhenRunningInActions() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let summary = "\(out)/step-summary.md"
        let outcome = try cli.memharness(
            ["run", fixture("gate-absolute.yaml"), "--out", "\(out)/run"],
            environment: ["GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary])
        #expect(outcome.status == 2)
        #expect(
            outcome.stdout.contains(
                "::error file=\(fixture("gate-absolute.yaml")),line=16,col=20,title=memharness%3A gate-absolute / "
                    + "hold-large::"
            ))
        #expect(try String(contentsOfFile: summary, encoding: .utf8).contains("❌ FAIL"))
    }
}

extension GatingTests {
    @Test func anUnexpectedLeakExits2AndAnExpectedOneDoesNot() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let outcome = try cli.memharness([
            "run", fixture("unexpected-leak.yaml"), "--out", out, "--junit", "\(out)/junit.xml",
        ])
        #expect(outcome.status == 2, "\(outcome.stdout)\(outcome.stderr)")
        #expect(
            outcome.unwrappedStdout.contains("FAIL: unexpected-leak / strong-self-capture leaks (1 of 1 repetitions"))
        #expect(outcome.stdout.contains("✅ PASS  unexpected-leak  weak-self: expected leak-free"), "\(outcome.stdout)")
        #expect(try junitFailures("\(out)/junit.xml") == 1)
        let report = try String(contentsOfFile: "\(out)/report.md", encoding: .utf8)
        #expect(report.contains("Leaks"))

        // The same leak, declared: the run passes.
        let declared = try String(contentsOfFile: fixture("unexpected-leak.yaml"), encoding: .utf8)
            .replacingOccurrences(
                of: "{name: strong-self-capture, expect: leak-free}", with: "{name: strong-self-capture, expect: leaks}"
            )
        try declared.write(toFile: "\(out)/declared.yaml", atomically: true, encoding: .utf8)
        let passing = try cli.memharness(["run", "\(out)/declared.yaml", "--out", "\(out)/declared"])
        #expect(passing.status == 0, "\(passing.stdout)\(passing.stderr)")
    }
}
