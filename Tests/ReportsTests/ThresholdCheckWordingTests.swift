import HarnessModel
import Reports
import TestSupport
import Testing
import Verdicts

/// Thresholds judged and worded: the median against the limit, the check's message and margin.
struct ThresholdTests {
    /// `threshold` judged in `run` and worded as the record keeps it.
    func evaluate(_ threshold: Threshold, in run: ScenarioRun) -> CheckResult {
        CheckWording.result(Check(scenario: run.name, ThresholdJudgement(threshold, in: run)))
    }

    static var run: ScenarioRun {
        RankingFixture.run(
            [
                RankingFixture.result("unbounded", 1, net: 140_000_000),
                RankingFixture.result("signal", 1, net: 10_000_000),
                RankingFixture.result("unbounded", 2, net: 150_000_000),
                RankingFixture.result("signal", 2, net: 12_000_000),
                RankingFixture.result("unbounded", 3, net: 145_000_000),
                RankingFixture.result("signal", 3, net: 11_000_000),
            ], strategies: ["unbounded", "signal"])
    }

    func threshold(
        _ strategy: String, _ comparison: Comparison, _ limit: Threshold.Limit, figure: Figure = .peakAllocated
    ) -> Threshold {
        Threshold(
            subject: FigureReference(strategy: strategy, figure: figure), comparison: comparison, limit: limit,
            text: "t", file: "f.yaml", line: 3, column: 5)
    }

    @Test func absoluteLimitsAreCheckedOnTheMedian() {
        let pass = evaluate(threshold("signal", .lessOrEqual, .absolute(11_000_000)), in: Self.run)
        #expect(pass.passed)
        #expect(pass.margin == "+0.0%")
        let fail = evaluate(threshold("signal", .less, .absolute(11_000_000)), in: Self.run)
        #expect(!fail.passed)
        #expect(fail.message.contains("f.yaml:3"))
        #expect(fail.spreadPercent.map { Int($0) } == 18)
    }

    @Test func relativeLimitsUseTheOtherStrategysMedian() {
        let tenth = FigureReference(strategy: "unbounded", figure: .peakAllocated)
        #expect(
            evaluate(
                threshold("signal", .lessOrEqual, .relative(factor: 0.1, of: tenth)), in: Self.run
            ).passed)
        let check = evaluate(
            threshold("signal", .lessOrEqual, .relative(factor: 0.05, of: tenth)), in: Self.run)
        #expect(!check.passed)
        #expect(check.limit.contains("0.05 × unbounded.peakAllocated"))
    }

    @Test func phaseAndMissingFigures() {
        #expect(
            evaluate(
                threshold("signal", .lessOrEqual, .absolute(11_000_000), figure: .phasePeakAllocated("burst")),
                in: Self.run
            ).passed)
        let missing = evaluate(
            threshold("signal", .lessOrEqual, .absolute(1), figure: .metric("nope")), in: Self.run)
        #expect(!missing.passed)
        #expect(missing.message.contains("has no value"))
    }

    @Test func thresholdsOnStrategiesThatDidNotRunAreSkipped() {
        var shard = Self.run
        shard.cases.removeAll { $0.strategy == "unbounded" }
        let relative = threshold(
            "signal", .lessOrEqual,
            .relative(factor: 0.1, of: FigureReference(strategy: "unbounded", figure: .peakAllocated)))
        #expect(
            ThresholdJudgement.evaluate([relative, threshold("signal", .lessOrEqual, .absolute(1))], in: shard).count
                == 1)
    }

    @Test func baselineRegressionsNeedBothToleranceAndFloor() {
        let report = RunReport(generatedAt: "t", environment: ReportEnvironment.example, scenarios: [Self.run])
        var baseline = Baseline(name: "b", report: report)
        #expect(baseline.cases["s/signal"]?["peakAllocated"] == 11_000_000)
        let policy = BaselinePolicy(tolerance: 0.10, floorBytes: 256 * 1024)
        #expect(policy.worded(report, with: baseline, baselineFile: "b.json").allSatisfy { $0.passed })
        baseline.cases["s/signal"]?["peakAllocated"] = 9_000_000  // now +22%, +2 MB: a regression
        let checks = policy.worded(report, with: baseline, baselineFile: "b.json")
        #expect(checks.filter { !$0.passed }.map(\.name) == ["signal.peakAllocated vs baseline"])
        #expect(
            BaselinePolicy(tolerance: 0.10, floorBytes: 4_000_000).worded(
                report, with: baseline, baselineFile: "b.json"
            ).allSatisfy { $0.passed })
        baseline.cases["s/signal"]?["peakAllocated"] = 13_000_000  // now -15%: an improvement
        #expect(policy.worded(report, with: baseline, baselineFile: "b.json").allSatisfy { $0.passed })
        #expect(
            !BaselinePolicy(tolerance: 0.10, floorBytes: 256 * 1024, failOnImprovement: true)
                .worded(report, with: baseline, baselineFile: "b.json").allSatisfy { $0.passed })
    }
}

enum ReportEnvironment {
    static let example = EnvironmentInfo(
        toolVersion: "0", jemallocVersion: "5", jemallocSettings: [:], swiftVersion: "6", operatingSystem: "l",
        kernel: "k", cpuModel: "c", cpuCount: 2, memoryBytes: 1, requestedIntervalNanoseconds: 1_000_000)
}
