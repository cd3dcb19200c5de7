import Foundation
import HarnessModel
import TestSupport
import Testing

/// The 95% interval of a median, the stopping rule of `repetitions: auto`, tolerances derived from noise,
/// and the noise-aware baseline gate: pure functions on known samples.
struct MedianIntervalTests {
    @Test(arguments: [
        (6, 1, 0.96875), (7, 1, 0.984375), (8, 1, 0.9921875), (9, 2, 0.9609375), (10, 2, 0.978515625),
        (11, 2, 0.98828125), (12, 3, 0.9614257813), (15, 4, 0.9648437500), (20, 6, 0.9586105347),
    ])
    func ranksFollowTheBinomialTable(_ count: Int, _ rank: Int, _ coverage: Double) throws {
        #expect(MedianInterval.rank(count: count, confidence: 0.95) == rank)
        #expect(abs(MedianInterval.coverage(count: count, rank: rank) - coverage) < 1e-9)
        // The next rank in would fall below 95%: the interval is the narrowest that holds.
        #expect(MedianInterval.coverage(count: count, rank: rank + 1) < 0.95)
    }

    @Test func fiveValuesHaveNo95PercentInterval() {
        // Even [min, max] of 5 values misses the median 2 × (1/2)^5 = 6.25% of the time.
        #expect(MedianInterval.rank(count: 5, confidence: 0.95) == nil)
        #expect(MedianInterval([1, 2, 3, 4, 5]) == nil)
        #expect(MedianInterval([1, 2, 3, 4, 5, .nan]) == nil)
        #expect(MedianInterval([1, 2, 3, 4, 5, 6]) != nil)
    }

    @Test func theEndsAreTheKthSmallestAndLargestValues() throws {
        // 9 values in shuffled order: k = 2, so the interval is the second smallest to the second largest.
        let interval = try #require(MedianInterval([104, 99, 100, 97, 101, 103, 98, 110, 102]))
        #expect(interval.median == 101)
        #expect(interval.lower == 98)
        #expect(interval.upper == 104)
        #expect(interval.rank == 2)
        #expect(interval.count == 9)
        #expect(abs(interval.relativeReach - 3.0 / 101) < 1e-12)
        #expect(abs(interval.relativeLower + 3.0 / 101) < 1e-12)
    }

    @Test func zeroMediansAreHandled() throws {
        #expect(try #require(MedianInterval([0, 0, 0, 0, 0, 0])).relativeReach == 0)
        #expect(try #require(MedianInterval([0, 0, 0, 0, 0, 5])).relativeReach == .infinity)
    }
}

struct StoppingRuleTests {
    let rule = AdaptiveRepetitions(target: 0.02, minimum: 6, maximum: 15)

    @Test func runsTheMinimumFirst() {
        #expect(rule.decision(attempts: 5, incomplete: 0, figures: [[100, 100, 100, 100, 100]]) == .more)
    }

    @Test func stopsWhenTheIntervalIsWithinTheTarget() {
        // 6 values within ±1.5% of the median: [min, max] reaches 1.5% < 2%.
        let steady: [Double] = [100, 101, 99, 100.5, 98.5, 101.5]
        #expect(rule.decision(attempts: 6, incomplete: 0, figures: [steady]) == .stop(.narrow))
        // One value 5% out: at 6 values the interval is [min, max], too wide, so one more.
        let outlier: [Double] = [100, 101, 99, 100.5, 100, 105]
        #expect(rule.decision(attempts: 6, incomplete: 0, figures: [outlier]) == .more)
        // At 9 values the ends are the second smallest and largest: the outlier no longer counts.
        let nine = outlier + [100, 99.5, 100.2]
        #expect(rule.decision(attempts: 9, incomplete: 0, figures: [nine]) == .stop(.narrow))
    }

    @Test func everyWatchedFigureMustBeNarrow() {
        let steady: [Double] = [100, 100, 100, 100, 100, 100]
        let noisy: [Double] = [100, 120, 80, 100, 90, 110]
        #expect(rule.decision(attempts: 6, incomplete: 0, figures: [steady, noisy]) == .more)
        // A figure some completed repetition lacks is not watched.
        #expect(rule.decision(attempts: 6, incomplete: 0, figures: [steady, Array(noisy.prefix(5))]) == .stop(.narrow))
    }

    @Test func stopsAtTheMaximumNarrowOrNot() {
        let noisy = (0..<15).map { Double(100 + ($0 % 2 == 0 ? 10 : -10)) }
        #expect(rule.decision(attempts: 14, incomplete: 0, figures: [Array(noisy.prefix(14))]) == .more)
        #expect(rule.decision(attempts: 15, incomplete: 0, figures: [noisy]) == .stop(.maximum))
    }

    @Test func stopsWhenARepetitionDidNotComplete() {
        #expect(
            rule.decision(attempts: 6, incomplete: 1, figures: [[100, 120, 80, 100, 90]]) == .stop(.incomplete))
        #expect(rule.decision(attempts: 3, incomplete: 3, figures: [[]]) == .more)
    }

    @Test func decidesFromCaseResults() {
        let results = (1...6).map { repetition in
            CaseResult.draft(strategy: "a", repetition: repetition) { result in
                result.baselineAllocatedBytes = 1000
                result.peak.allocatedBytes = 1000 + 1_000_000 + repetition * 1000  // ±0.3%
            }
        }
        #expect(rule.decision(for: results, watching: [.peakAllocated]) == .stop(.narrow))
        #expect(rule.decision(for: Array(results.prefix(5)), watching: [.peakAllocated]) == .more)
        let crashed = results.prefix(5) + [CaseResult.draft(strategy: "a", repetition: 6, status: .crashed)]
        #expect(rule.decision(for: Array(crashed), watching: [.peakAllocated]) == .stop(.incomplete))
    }

    @Test func watchesTheGatedFigureAndAnExplicitRanking() {
        #expect(AdaptiveRepetitions.watchedFigures(ranking: .peakAllocated, exactPeaks: false) == [.peakAllocated])
        #expect(AdaptiveRepetitions.watchedFigures(ranking: .peakAllocated, exactPeaks: true) == [.exactPeak])
        #expect(
            AdaptiveRepetitions.watchedFigures(ranking: .metric("fileGrowth"), exactPeaks: false)
                == [.peakAllocated, .metric("fileGrowth")])
    }
}
