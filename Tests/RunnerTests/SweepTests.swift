import HarnessModel
import Runner
import TestSupport
import Testing

@testable import Scenarios

@Suite struct SweepSpecTests {
    @Test func readsAKeyAndItsValues() throws {
        let sweep = try SweepSpec(parsing: "burst.duration=1s, 2s,4s")
        #expect(sweep.key == "burst.duration")
        #expect(sweep.values == ["1s", "2s", "4s"])
        #expect(sweep.overrides == ["burst.duration=1s", "burst.duration=2s", "burst.duration=4s"])
    }

    @Test func tellsASweepFromASingleOverride() {
        #expect(SweepSpec.isSweep("burst.duration=1s,2s"))
        #expect(!SweepSpec.isSweep("burst.duration=1s"))
        #expect(!SweepSpec.isSweep("a,b"))
    }

    @Test(arguments: [
        ("payloadSize=4KiB", "at least two values"),
        ("payloadSize=4KiB,,8KiB", "value 2 of the sweep is empty"),
        ("payloadSize=4KiB,4KiB", "'4KiB' is listed twice"),
        ("=1s,2s", "expected NAME=V1,V2"),
        ("burst.duration", "expected NAME=V1,V2"),
    ])
    func refusesMalformedSweepsSayingHowToFixThem(_ text: String, _ message: String) {
        #expect {
            try SweepSpec(parsing: text)
        } throws: { error in
            "\(error)".contains(message) && "\(error)".hasPrefix("--set '\(text)'")
        }
    }
}

@Suite struct LinearFitTests {
    @Test func fitsAnExactLine() throws {
        let fit = try #require(LinearFit.leastSquares([(1, 5), (2, 7), (4, 11)]))
        #expect(abs(fit.slope - 2) < 1e-12)
        #expect(abs(fit.intercept - 3) < 1e-12)
        #expect(abs((fit.rSquared ?? 0) - 1) < 1e-12)
        #expect(abs(fit.value(at: 8) - 19) < 1e-9)
    }

    @Test func aFlatSeriesHasZeroSlopeAndNoExplainedVariance() throws {
        let fit = try #require(LinearFit.leastSquares([(1, 4e6), (2, 4e6), (4, 4e6)]))
        #expect(fit.slope == 0)
        #expect(fit.intercept == 4e6)
        #expect(fit.rSquared == nil)
    }

    @Test func fitsNoisyDataByLeastSquares() throws {
        // Points (0,1), (1,3), (2,2), (3,5): slope = sxy/sxx = 5.5/5 = 1.1, intercept = 2.75 - 1.1 * 1.5 = 1.1.
        let fit = try #require(LinearFit.leastSquares([(0, 1), (1, 3), (2, 2), (3, 5)]))
        #expect(abs(fit.slope - 1.1) < 1e-12)
        #expect(abs(fit.intercept - 1.1) < 1e-12)
        // r² = sxy² / (sxx * syy) = 30.25 / (5 * 8.75).
        #expect(abs((fit.rSquared ?? 0) - 30.25 / 43.75) < 1e-12)
    }

    @Test func needsTwoDistinctXValues() {
        #expect(LinearFit.leastSquares([]) == nil)
        #expect(LinearFit.leastSquares([(1, 2)]) == nil)
        #expect(LinearFit.leastSquares([(1, 2), (1, 9)]) == nil)
    }
}

@Suite struct SweepSummaryTests {
    private static let baseline = 10_000_000

    private static func result(_ strategy: String, repetition: Int, peakNet: Int, status: CaseStatus = .ok)
        -> CaseResult
    {
        CaseResult.draft(
            scenario: "live-query", workload: "live-query", strategy: strategy, repetition: repetition, status: status
        ) { result in
            result.baselineAllocatedBytes = baseline
            result.peak.allocatedBytes = baseline + peakNet
        }
    }

    private static func run(_ cases: [CaseResult]) -> ScenarioRun {
        ScenarioRun(
            name: "live-query", file: "Scenarios/live-query.yaml", workload: "live-query", summary: "",
            parameters: [], strategies: ["unbounded-dispatch", "signal-next"], steps: ["burst"],
            repetitions: 2, cases: cases)
    }

    @Test func fitsEachStrategysMedianPeakAgainstTheSweptDurationInBytesPerSecond() throws {
        // unbounded-dispatch grows 70 MB per second of burst (medians of two repetitions); signal-next stays at 5 MB.
        let points: [(label: String, value: ParameterValue, run: ScenarioRun)] = [1, 2, 4].map { seconds in
            let growth = 70_000_000 * seconds
            return (
                "\(seconds)s", .duration(nanoseconds: Int64(seconds) * 1_000_000_000),
                Self.run([
                    Self.result("unbounded-dispatch", repetition: 1, peakNet: growth - 1_000_000),
                    Self.result("unbounded-dispatch", repetition: 2, peakNet: growth + 1_000_000),
                    Self.result("signal-next", repetition: 1, peakNet: 5_000_000),
                    Self.result("signal-next", repetition: 2, peakNet: 5_000_000),
                ])
            )
        }
        let summary = SweepSummary(scenario: "live-query", key: "burst.duration", points: points)
        #expect(summary.xUnit == "s")
        #expect(summary.series.map(\.strategy) == ["unbounded-dispatch", "signal-next"])

        let unbounded = summary.series[0]
        #expect(unbounded.points.map(\.label) == ["1s", "2s", "4s"])
        #expect(unbounded.points.map(\.x) == [1, 2, 4])
        #expect(unbounded.points.map(\.medianPeakAllocatedNetBytes) == [70e6, 140e6, 280e6])
        let growth = try #require(unbounded.fit)
        #expect(abs(growth.slope - 70e6) < 1e-3)

        let flat = try #require(summary.series[1].fit)
        #expect(flat.slope == 0)
    }

    @Test func aPointWhereEveryRepetitionFailedIsLeftOutOfTheFit() throws {
        let points: [(label: String, value: ParameterValue, run: ScenarioRun)] = [
            ("1KiB", .bytes(1024), Self.run([Self.result("unbounded-dispatch", repetition: 1, peakNet: 1000)])),
            (
                "2KiB", .bytes(2048),
                Self.run([Self.result("unbounded-dispatch", repetition: 1, peakNet: 0, status: .crashed)])
            ),
            ("4KiB", .bytes(4096), Self.run([Self.result("unbounded-dispatch", repetition: 1, peakNet: 4072)])),
        ]
        let summary = SweepSummary(scenario: "live-query", key: "payloadSize", points: points)
        #expect(summary.xUnit == "B")
        let series = summary.series[0]
        #expect(series.points[1].medianPeakAllocatedNetBytes == nil)
        let fit = try #require(series.fit)
        #expect(abs(fit.slope - 1) < 1e-9)
        #expect(summary.series[1].points.allSatisfy { $0.medianPeakAllocatedNetBytes == nil })
        #expect(summary.series[1].fit == nil)
    }

    @Test func readsTheSweptValueFromAParameterOrAStepArgument() {
        let scenario = ScenarioSpec(
            name: "live-query", file: "x.yaml", summary: "", workload: "live-query",
            parameters: ParameterValues(["payloadSize": .bytes(2048)]), parameterOrder: ["payloadSize"], strategies: [],
            steps: [
                StepInvocation(name: "subscribe", phase: "subscribe", arguments: ParameterValues()),
                StepInvocation(
                    name: "burst", phase: "first", arguments: ParameterValues(["duration": .duration(nanoseconds: 1)])),
                StepInvocation(
                    name: "burst", phase: "burst#2", arguments: ParameterValues(["duration": .duration(nanoseconds: 2)])
                ),
            ],
            repetitions: 1, interval: nil, timeout: .seconds(1), settle: .zero
        )
        #expect(sweptValue("payloadSize", in: scenario) == .bytes(2048))
        #expect(sweptValue("burst.duration", in: scenario) == .duration(nanoseconds: 1))
        #expect(sweptValue("first.duration", in: scenario) == .duration(nanoseconds: 1))
        #expect(sweptValue("burst#2.duration", in: scenario) == .duration(nanoseconds: 2))
        #expect(sweptValue("documents", in: scenario) == nil)
        #expect(sweptValue("cancel.limit", in: scenario) == nil)
    }
}
