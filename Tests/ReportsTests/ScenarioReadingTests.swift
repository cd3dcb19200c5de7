import FileIO
import HarnessModel
import Reports
import TestSupport
import Testing

/// The scenario in plain language, as `report.md` (Markdown) and the terminal (plain) print it.
struct ScenarioReadingTests {
    @Test func readsTheRatioOfTheWorstToTheBest() {
        let summary = ScenarioSummary(
            RankingFixture.run(RankingFixture.unboundedAndSignal, strategies: ["unbounded", "signal"]))
        #expect(summary.reading.hasPrefix("`unbounded` peaks 14.2x higher than `signal`"))
        #expect(summary.reading(.plain).hasPrefix("unbounded peaks 14.2x higher than signal"))
    }

    /// A strategy the memory limit stopped has no peak to rank: the reading leads with the kill, then compares
    /// the strategies that completed.
    @Test func killsLeadTheReading() {
        let cases = [
            RankingFixture.result("unbounded", 1, net: 0, status: .killedByMemoryLimit),
            RankingFixture.result("unbounded", 2, net: 0, status: .killedByMemoryLimit),
            RankingFixture.result("signal", 1, net: 10_000_000), RankingFixture.result("signal", 2, net: 10_000_000),
            RankingFixture.result("deliver", 1, net: 12_000_000), RankingFixture.result("deliver", 2, net: 12_000_000),
        ]
        let summary = ScenarioSummary(RankingFixture.run(cases, strategies: ["unbounded", "signal", "deliver"]))
        #expect(
            summary.reading
                == "Killed by the memory limit: `unbounded` (2/2 cases, at 1.00 s, 257.00 MiB). Among the strategies "
                + "that completed: `deliver` peaks 1.2x higher than `signal` (11.44 MiB vs 9.54 MiB above baseline).")
        let allKilled = ScenarioSummary(RankingFixture.run(Array(cases.prefix(2)), strategies: ["unbounded"]))
        #expect(allKilled.reading == "Killed by the memory limit: `unbounded` (2/2 cases, at 1.00 s, 257.00 MiB).")
    }

    @Test func similarPeaksReadAsSimilar() {
        let cases = [RankingFixture.result("a", 1, net: 1000), RankingFixture.result("b", 1, net: 1010)]
        #expect(
            ScenarioSummary(RankingFixture.run(cases, strategies: ["a", "b"])).reading
                == "Both strategies peak within 5% of each other (1000 B to 1010 B above baseline).")
        let three = cases + [RankingFixture.result("c", 1, net: 1000)]
        #expect(
            ScenarioSummary(RankingFixture.run(three, strategies: ["a", "b", "c"])).reading
                .hasPrefix("All 3 strategies peak within 5% of each other"))
    }

    /// The terminal's reading is the Markdown one without its code spans, whatever the ranking figure quotes
    /// (a metric's name) and whichever sentence applies (a kill, a single strategy, a ratio, a tie).
    @Test(arguments: [Figure.peakAllocated, .metric("callbacks"), .phasePeakAllocated("burst")])
    func thePlainReadingIsTheMarkdownOneWithoutCodeSpans(ranking: Figure) {
        let runs: [([CaseResult], [String])] = [
            ([RankingFixture.result("a", 1, net: 1000)], ["a"]),
            ([RankingFixture.result("a", 1, net: 1000), RankingFixture.result("b", 2, net: 9000)], ["a", "b"]),
            ([RankingFixture.result("a", 1, net: 1000), RankingFixture.result("b", 1, net: 1010)], ["a", "b"]),
            (
                [
                    RankingFixture.result("k", 1, net: 0, status: .killedByMemoryLimit),
                    RankingFixture.result("a", 1, net: 0),
                ], ["k", "a"]
            ),
        ]
        let summaries = runs.map { cases, strategies in
            var run = RankingFixture.run(cases, strategies: strategies)
            run.ranking = ranking
            return ScenarioSummary(run)
        }
        #expect(summaries.filter { $0.reading.contains("`") }.count >= 3, "the Markdown readings quote names")
        for summary in summaries {
            #expect(summary.reading(.plain) == summary.reading.replacingOccurrences(of: "`", with: ""))
        }
    }

    /// A metric or a phase as the ranking figure: quoted in the Markdown reading, bare in chart titles.
    @Test func aMetricOrPhaseRankingIsQuotedInTheReadingAndBareInTitles() {
        let cases = [RankingFixture.result("a", 1, net: 1000), RankingFixture.result("b", 2, net: 9000)]
        var run = RankingFixture.run(cases, strategies: ["a", "b"])
        run.ranking = .metric("callbacks")
        let metric = ScenarioSummary(run)
        #expect(metric.reading == "`b` has 2.0x the `callbacks` of `a` (2 vs 1).")
        #expect(metric.reading(.plain) == "b has 2.0x the callbacks of a (2 vs 1).")
        #expect(metric.rankingTitle == "callbacks" && metric.rankingAxisTitle == "callbacks")
        run.ranking = .phasePeakAllocated("burst")
        #expect(ScenarioSummary(run).rankingTitle == "peak allocated in burst")
    }
}
