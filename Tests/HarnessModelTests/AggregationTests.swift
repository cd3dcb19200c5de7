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

    @Test func ranksStrategiesByMedianNetPeak() {
        let summary = ScenarioSummary(
            RankingFixture.run(RankingFixture.unboundedAndSignal, strategies: ["unbounded", "signal"]))
        #expect(summary.ranked.map(\.strategy) == ["signal", "unbounded"])
        #expect(summary.ranked[1].medianPeakAllocatedNetBytes == 142_000_000)
        #expect(summary.ratioToBest(summary.ranked[1]) == 14.2)
        #expect(summary.ranked[0].phasePeakNetBytes.first?.bytes == 10_000_000)
        #expect(summary.ranked[0].metrics == [Metric(name: "callbacks", value: 2, unit: .count)])
    }

    @Test func failedCasesStayOutOfTheMedians() {
        let cases = [
            RankingFixture.result("a", 1, net: 100), RankingFixture.result("a", 2, net: 0, status: .crashed),
            RankingFixture.result("b", 1, net: 0, status: .timedOut),
        ]
        let summary = ScenarioSummary(RankingFixture.run(cases, strategies: ["a", "b"]))
        #expect(summary.ranked.map(\.strategy) == ["a"])
        #expect(summary.ranked[0].okCount == 1)
        #expect(summary.ranked[0].failedCount == 1)
        #expect(summary.failedStrategies == ["b"])
    }

    /// A strategy the memory limit stopped has no peak to rank: it is left out of the ranking and counted apart.
    @Test func killedStrategiesAreCountedApartFromTheRanking() {
        let cases = [
            RankingFixture.result("unbounded", 1, net: 0, status: .killedByMemoryLimit),
            RankingFixture.result("unbounded", 2, net: 0, status: .killedByMemoryLimit),
            RankingFixture.result("signal", 1, net: 10_000_000),
        ]
        let summary = ScenarioSummary(RankingFixture.run(cases, strategies: ["unbounded", "signal"]))
        #expect(summary.ranked.map(\.strategy) == ["signal"])
        #expect(summary.kills.map(\.strategy) == ["unbounded"])
        #expect(summary.kills.first?.killedCount == 2)
    }
}
