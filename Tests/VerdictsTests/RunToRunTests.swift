import HarnessModel
import Testing
import Verdicts

/// The one comparison of a figure between two runs and its noise model, on made-up pairs.
@Suite struct RunToRunTests {
    @Test func aChangeCountsOnlyOutsideTheBandAndBeyondTheFloor() {
        let noise = NoiseBand(relative: 0.05, floor: 1000)
        // +4% of 100,000: inside the 5% band.
        #expect(
            RunToRun.compare(before: 100_000, after: Measured(value: 104_000), noise: noise).direction == .unchanged)
        // +6%: outside.
        let up = RunToRun.compare(before: 100_000, after: Measured(value: 106_000), noise: noise)
        #expect(up.direction == .increased && up.band == 5000 && abs(up.relativeChange - 0.06) < 1e-12)
        #expect(RunToRun.compare(before: 100_000, after: Measured(value: 94_000), noise: noise).direction == .decreased)
        // +60% of 1,000 is outside the band, but within the 1,000-byte floor.
        let small = RunToRun.compare(before: 1000, after: Measured(value: 1600), noise: noise)
        #expect(small.outsideBand && !small.beyondFloor && small.direction == .unchanged)
        // No change is never a change, even with no band at all.
        #expect(RunToRun.compare(before: 5, after: Measured(value: 5), noise: NoiseBand()).direction == .unchanged)
    }

    @Test func theLaterRunsIntervalMustLieOutsideTheBandWhole() throws {
        // Nine repetitions: the interval is the second smallest to the second largest, 103...110.
        let values: [Double] = [102, 103, 104, 105, 106, 107, 108, 110, 111]
        let after = try #require(Measured(values: values))
        #expect(after.value == 106 && after.interval?.lower == 103 && after.interval?.upper == 110)
        // The median is 6% up, but the interval reaches back to 3%, inside a 4% band: noise.
        let band = NoiseBand(relative: 0.04)
        #expect(RunToRun.compare(before: 100, after: after, noise: band).direction == .unchanged)
        // The same median alone (a record without its repetitions) is outside.
        #expect(RunToRun.compare(before: 100, after: Measured(value: 106), noise: band).direction == .increased)
        #expect(Measured(values: []) == nil)
    }

    @Test func theBandIsTheWidestOfItsSources() {
        let band = NoiseBand(sigma: 10, factor: 2.5, relative: 0.01, absolute: 20)
        #expect(band.halfWidth(around: 1000) == 25)  // 2.5σ
        #expect(band.halfWidth(around: 4000) == 40)  // 1% of 4,000
        #expect(NoiseBand(sigma: 1, factor: 2, absolute: 20).halfWidth(around: 1000) == 20)  // the least band
        // A history series' band is taken as it is.
        #expect(NoiseBand.series(halfWidth: 7).halfWidth(around: 1e9) == 7)
        #expect(NoiseBand.tolerance(0.1, floor: 3).halfWidth(around: -200) == 20)
    }

    @Test func byteSamplingNoiseGrowsWithTheSitesBytesAndTheMean() {
        let mean = Double(64 << 10)
        // A 75 MiB site that moved by 2.84 MiB between two runs sampled every 64 KiB on average: σ = √(B₁m + B₂m)
        // ≈ 3.1 MiB, so 2σ is 6.2 MiB and the move is sampling; 2% of a 78 MiB peak alone would have called it growth.
        let before = 75.12 * 1_048_576
        let after = 77.96 * 1_048_576
        let big = NoiseBand.sampling(before: (before, mean), after: (after, mean), least: 0.02 * 78 * 1_048_576)
        #expect(abs(big.sigma - (before * mean + after * mean).squareRoot()) < 1e-6)
        #expect(RunToRun.compare(before: before, after: Measured(value: after), noise: big).direction == .unchanged)
        // A 3.7 MiB site that grew to 8.2 MiB: σ ≈ 0.9 MiB, the growth is real.
        let small = NoiseBand.sampling(
            before: (3.71 * 1_048_576, mean), after: (8.15 * 1_048_576, mean), least: 0.02 * 12 * 1_048_576)
        #expect(
            RunToRun.compare(before: 3.71 * 1_048_576, after: Measured(value: 8.15 * 1_048_576), noise: small)
                .direction == .increased)
        // Denser sampling narrows the band: the same 2.84 MiB move at a 256 B mean is growth.
        let dense = NoiseBand.sampling(before: (before, 256), after: (after, 256), least: 0)
        #expect(RunToRun.compare(before: before, after: Measured(value: after), noise: dense).direction == .increased)
    }

    @Test func aZeroBeforeHasNoRelativeChangeButStillMoves() {
        let change = RunToRun.compare(before: 0, after: Measured(value: 10), noise: NoiseBand(relative: 0.5))
        #expect(change.relativeChange == .infinity && change.direction == .increased)
    }
}
