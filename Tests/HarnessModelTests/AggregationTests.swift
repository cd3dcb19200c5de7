import HarnessModel
import TestSupport
import Testing

struct AggregationTests {
    @Test func medianAndPercentiles() {
        #expect(Statistics.median([]) == nil)
        #expect(Statistics.median([3]) == 3)
        #expect(Statistics.median([5, 1, 3]) == 3)
        #expect(Statistics.median([4, 1, 3, 2]) == 2.5)
        #expect(Statistics.percentile([1, 2, 3, 4, 5], 0) == 1)
        #expect(Statistics.percentile([1, 2, 3, 4, 5], 100) == 5)
        #expect(Statistics.percentile([1, 2, 3, 4, 5], 25) == 2)
        #expect(Statistics.percentile(Array(1...100).map(Double.init), 99) == 99.01)
        #expect(Statistics.spreadPercent([90, 100, 110]) == 20)
        #expect(Statistics.spreadPercent([100]) == nil)
    }

    static func result(_ strategy: String, _ repetition: Int, net: Int, status: CaseStatus = .ok) -> CaseResult {
        CaseResult.draft(strategy: strategy, repetition: repetition, status: status) { result in
            result.baselineAllocatedBytes = 1_000_000
            result.peak.allocatedBytes = 1_000_000 + net
            result.phases = [
                PhaseResult(
                    name: "burst", startNanoseconds: 0, endNanoseconds: 1, peakAllocatedBytes: 1_000_000 + net,
                    peakResidentBytes: 0)
            ]
            result.metrics = [Metric(name: "callbacks", value: Double(repetition), unit: .count)]
        }
    }

    static func run(_ cases: [CaseResult], strategies: [String]) -> ScenarioRun {
        ScenarioRun(
            name: "s", file: "s.yaml", workload: "w", summary: "", parameters: [], strategies: strategies,
            steps: ["burst"], repetitions: 3, cases: cases)
    }

    @Test func ranksStrategiesByMedianNetPeakAndReadsTheRatio() {
        let cases = [
            Self.result("unbounded", 1, net: 140_000_000), Self.result("signal", 1, net: 10_000_000),
            Self.result("unbounded", 2, net: 150_000_000), Self.result("signal", 2, net: 11_000_000),
            Self.result("unbounded", 3, net: 142_000_000), Self.result("signal", 3, net: 10_000_000),
        ]
        let summary = ScenarioSummary(Self.run(cases, strategies: ["unbounded", "signal"]))
        #expect(summary.ranked.map(\.strategy) == ["signal", "unbounded"])
        #expect(summary.ranked[1].medianPeakAllocatedNetBytes == 142_000_000)
        #expect(summary.ratioToBest(summary.ranked[1]) == 14.2)
        #expect(summary.reading.hasPrefix("`unbounded` peaks 14.2x higher than `signal`"))
        #expect(summary.ranked[0].phasePeakNetBytes.first?.bytes == 10_000_000)
        #expect(summary.ranked[0].metrics == [Metric(name: "callbacks", value: 2, unit: .count)])
    }

    @Test func failedCasesStayOutOfTheMedians() {
        let cases = [
            Self.result("a", 1, net: 100), Self.result("a", 2, net: 0, status: .crashed),
            Self.result("b", 1, net: 0, status: .timedOut),
        ]
        let summary = ScenarioSummary(Self.run(cases, strategies: ["a", "b"]))
        #expect(summary.ranked.map(\.strategy) == ["a"])
        #expect(summary.ranked[0].okCount == 1)
        #expect(summary.ranked[0].failedCount == 1)
        #expect(summary.failedStrategies == ["b"])
    }

    /// A strategy the memory limit stopped has no peak to rank: the reading leads with the kill, then compares
    /// the strategies that completed.
    @Test func killsLeadTheReading() {
        let cases = [
            Self.result("unbounded", 1, net: 0, status: .killedByMemoryLimit),
            Self.result("unbounded", 2, net: 0, status: .killedByMemoryLimit),
            Self.result("signal", 1, net: 10_000_000), Self.result("signal", 2, net: 10_000_000),
            Self.result("deliver", 1, net: 12_000_000), Self.result("deliver", 2, net: 12_000_000),
        ]
        let summary = ScenarioSummary(Self.run(cases, strategies: ["unbounded", "signal", "deliver"]))
        #expect(summary.ranked.map(\.strategy) == ["signal", "deliver"])
        #expect(
            summary.reading
                == "Killed by the memory limit: `unbounded` (2/2 cases, at 1.00 s, 257.00 MiB). Among the strategies "
                + "that completed: `deliver` peaks 1.2x higher than `signal` (11.44 MiB vs 9.54 MiB above baseline).")
        let allKilled = ScenarioSummary(Self.run(Array(cases.prefix(2)), strategies: ["unbounded"]))
        #expect(allKilled.reading == "Killed by the memory limit: `unbounded` (2/2 cases, at 1.00 s, 257.00 MiB).")
    }

    @Test func similarPeaksReadAsSimilar() {
        let cases = [Self.result("a", 1, net: 1000), Self.result("b", 1, net: 1010)]
        #expect(
            ScenarioSummary(Self.run(cases, strategies: ["a", "b"])).reading
                == "Both strategies peak within 5% of each other (1000 B to 1010 B above baseline).")
        let three = cases + [Self.result("c", 1, net: 1000)]
        #expect(
            ScenarioSummary(Self.run(three, strategies: ["a", "b", "c"])).reading
                .hasPrefix("All 3 strategies peak within 5% of each other"))
    }
}
