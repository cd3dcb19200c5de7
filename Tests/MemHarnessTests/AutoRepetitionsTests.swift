import FileIO
import Foundation
import HarnessModel
import Reports
import Testing
import Verdicts

/// `repetitions: auto` end to end: the run decides the counts, the report states each median's interval,
/// `baseline save` derives tolerances from it and the gate fails only outside the noise.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct AutoRepetitionsTests {
    let cli = CommandLineTests()

    var fixture: String { CommandLineTests.fixtures.appendingPathComponent("auto-repetitions.yaml").path }

    @Test(.timeLimit(.minutes(5))) func runsUntilTheIntervalIsNarrowAndGatesOnTheNoise() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try cli.memharness(["run", fixture, "--out", "\(out)/run"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let record = try ReportFolder.read("\(out)/run")
        let scenario = try #require(record.report.scenarios.first)
        #expect(scenario.adaptiveRepetitions == AdaptiveRepetitions(target: 0.02, minimum: 6, maximum: 8))
        for strategy in scenario.strategies {
            let results = scenario.cases.filter { $0.strategy == strategy }
            #expect((6...8).contains(results.count), "\(strategy) ran \(results.count) times")
            #expect(results.map(\.repetition) == Array(1...results.count))
            // Each strategy stopped for a reason the rule gives: narrow, or at the maximum.
            let decision = try #require(scenario.adaptiveRepetitions).decision(
                for: results, watching: [.peakAllocated])
            #expect(decision == .stop(.narrow) || (decision == .stop(.maximum) && results.count == 8))
        }
        // One block of 4 MiB never moves: it stops at the minimum.
        #expect(scenario.cases.filter { $0.strategy == "hold-large" }.count == 6)

        let markdown = try String(contentsOfFile: "\(out)/run/report.md", encoding: .utf8)
        #expect(markdown.contains("repetitions: auto, "))
        #expect(markdown.contains("### Repetitions"))
        #expect(markdown.contains("| `hold-large` | 6 | peak allocated |"))
        let summary = try String(contentsOfFile: "\(out)/run/summary.csv", encoding: .utf8)
        let header = try #require(CSVTable.parse(summary).first)
        #expect(header.contains("peak_allocated_net_ci95_low_bytes"))
        #expect(header.contains("peak_allocated_net_ci95_high_bytes"))

        // `report` renders the same bytes again from run.json.
        try FileManager.default.copyItem(atPath: "\(out)/run", toPath: "\(out)/again")
        #expect(try cli.memharness(["report", "\(out)/again"]).status == 0)
        for file in ["report.md", "summary.csv", "samples.csv", "charts/auto-repetitions-peaks.svg"] {
            #expect(
                FileManager.default.contents(atPath: "\(out)/run/\(file)")
                    == FileManager.default.contents(atPath: "\(out)/again/\(file)"), "\(file)")
        }

        try checkBaselineGates(out)
    }

    /// `baseline save` derives tolerances; the same run passes against them; a 5% higher hold fails with its size.
    func checkBaselineGates(_ out: String) throws {
        let saved = try cli.memharness(["baseline", "save", "--from", "\(out)/run", "--output", "\(out)/base.json"])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stdout.contains("3 figures with a tolerance derived from their noise"))
        let baseline = try BaselineFile.read("\(out)/base.json")
        let noise = try #require(baseline.derivedTolerance("auto-repetitions/hold-large", .peakAllocated))
        #expect(noise.method == .interval95)
        #expect(noise.repetitions == 6)
        #expect(noise.tolerance >= ToleranceDerivation.defaultMinimum)
        #expect(
            try cli.memharness(["compare", "\(out)/run", "--baseline", "\(out)/base.json", "--floor", "0"]).status == 0)

        // Pretend the baseline of the hold was 5% smaller: a regression outside its noise of ±1%.
        var lower = baseline
        let measured = try #require(lower.cases["auto-repetitions/hold-large"]?["peakAllocated"])
        lower.cases["auto-repetitions/hold-large"]?["peakAllocated"] = (measured / 1.05).rounded()
        try JSONEncoder().encode(lower).write(to: URL(fileURLWithPath: "\(out)/lower.json"))
        let regression = try cli.memharness([
            "compare", "\(out)/run", "--baseline", "\(out)/lower.json", "--floor", "0",
        ])
        #expect(regression.status == 2)
        // The figures of the message are the baseline's and the run's (a 4 MiB hold reads 4.00 MiB).
        let was = Units.formatBytes(Int((measured / 1.05).rounded()))
        #expect(
            regression.unwrappedStdout.contains(
                "FAIL: auto-repetitions / hold-large.peakAllocated regressed: \(was) → "),
            "\(regression.stdout)")
        #expect(regression.unwrappedStdout.contains(", +5.0% (+"))
        #expect(
            regression.unwrappedStdout.contains(
                "above the baseline, outside its noise of ±1.0% (measured over 6 repetitions;"))
        // The same baseline at the old flat 10%: not a failure.
        #expect(
            try cli.memharness([
                "compare", "\(out)/run", "--baseline", "\(out)/lower.json", "--floor", "0", "--tolerance", "10%",
            ]).status == 0)
    }

    @Test func autoRepetitionsRefuseShardsAndBadCountsBeforeAnyWork() throws {
        let out = try cli.temporaryDirectory()
        try FileManager.default.removeItem(atPath: out)
        let sharded = try cli.memharness(["run", fixture, "--shard", "1/2", "--out", out])
        #expect(sharded.status == 64)
        #expect(sharded.stderr.contains("--shard cannot split `repetitions: auto`"))
        let repeated = try cli.memharness(["run", fixture, "--repeat", "0", "--out", out])
        #expect(repeated.status == 64)
        #expect(repeated.stderr.contains("--repeat 0 is out of range; allowed: 1...100, or auto"))
        let bad = try cli.memharness(["run", fixture, "--repeat", "often", "--out", out])
        #expect(bad.status == 64)
        let broken = "\(NSTemporaryDirectory())memharness-auto-\(UUID().uuidString).yaml"
        defer { try? FileManager.default.removeItem(atPath: broken) }
        try String(contentsOfFile: fixture, encoding: .utf8)
            .replacingOccurrences(of: "min: 6, max: 8", with: "min: 6, max: 4")
            .write(toFile: broken, atomically: true, encoding: .utf8)
        let parsed = try cli.memharness(["run", broken, "--out", out])
        #expect(parsed.status == 64)
        #expect(
            parsed.stderr.contains(
                "\(broken):14:52: bad value '4' for 'repetitions.max'; expected a whole number in 6...100"))
        #expect(!FileManager.default.fileExists(atPath: out), "nothing ran, nothing was written")
    }
}
