import Foundation
import Testing
import WorkloadKit

@testable import History

/// Change points on series recorded from real runs of unchanged programs (Fixtures/recorded-series.json, written
/// by `make history-series`; `make bench-history` prints the same trials with the same seed): the quality bars.
@Suite struct RecordedSeriesTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/recorded-series.json")

    static func series() throws -> [RecordedSeries] {
        let file = try JSONDecoder().decode(RecordedSeries.File.self, from: Data(contentsOf: Self.file))
        #expect(file.format == RecordedSeries.File.currentFormat)
        return file.series
    }

    /// The benchmark's trials: its seed, 10% steps, `injections` per series.
    static func trials(injections: Int) throws -> RecordedSeries.Trials {
        var generator = SeededRandom(seed: 26)
        return RecordedSeries.trialsBySubject(
            try series(), relativeStep: 0.1, injections: injections, using: &generator
        ).map(\.trials).reduce(RecordedSeries.Trials(), +)
    }

    /// The bars are about the series that broke the detection before: the fixture holds them. Page-quantised
    /// series that vary; series whose successive differences are mostly 0 though they vary (a robust noise
    /// estimate from them is 0); series that never move.
    @Test func theFixtureHoldsQuantisedCollapsingAndConstantSeries() throws {
        let series = try Self.series()
        let varying = series.filter { Set($0.values).count > 1 }
        let paged = varying.filter { $0.isBytes && SeriesNoise.quantum(of: $0.values, largest: 4096) == 4096 }
        let collapsing = varying.filter { entry in
            SeriesNoise.spread(zip(entry.values.dropFirst(), entry.values).map { $0 - $1 }) == 0
        }
        let constant = series.filter { Set($0.values).count == 1 }
        #expect(series.count >= 100 && series.allSatisfy { $0.values.count >= 5 }, "\(series.count) series")
        #expect(paged.count >= 20 && collapsing.count >= 10 && constant.count >= 10)
    }

    /// At most 1 in 20 series of unchanged runs has a step found (a change point or a step of the newest run), as
    /// recorded and at every length as it grew.
    @Test func falseStepsStayUnderOneInTwenty() throws {
        let trials = try Self.trials(injections: 0)
        #expect(trials.falseSteps.trials >= 100 && trials.falseSteps.hits * 20 <= trials.falseSteps.trials, "\(trials)")
        let grown = trials.falseStepsAsTheyGrew
        #expect(grown.trials >= 1000 && grown.hits * 20 <= grown.trials, "\(trials)")
    }

    /// A real step of 10% of the median injected at a random run (two runs or more either side) is found at its
    /// run in at least 19 of 20 trials in the series quieter than the step; the benchmark's seed and trials.
    @Test func tenPercentStepsAreFoundNineteenTimesInTwenty() throws {
        let found = try Self.trials(injections: 10).foundAtStepInQuiet
        #expect(found.trials >= 1000 && found.hits * 20 >= found.trials * 19, "\(found)")
    }
}
