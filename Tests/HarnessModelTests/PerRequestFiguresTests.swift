import HarnessModel
import Testing

/// A load step's per-request figures from its rounds' exact counts, on rounds whose answer is known by construction.
struct PerRequestFiguresTests {
    /// A round of `requests` that made `calls` allocations of `bytes` in all and left `live` bytes after it.
    static func round(
        _ requests: Int, calls: Int64, bytes: Int64, from start: ExactCounts, live: Int64, peak: Int64? = nil
    ) -> LoadRound {
        let after = ExactCounts(
            liveBytes: live, allocationCalls: start.allocationCalls + calls,
            allocatedBytes: start.allocatedBytes + bytes)
        return LoadRound(
            figures: LoadFigures(
                requests: requests, errors: 0, bytes: 0, latencyP50Nanoseconds: 1, latencyP99Nanoseconds: 2),
            before: start, after: after, peakLiveBytes: peak ?? live)
    }

    /// Rounds of 1,000 requests, each keeping `kept(round)` bytes more, with 7 allocations per request plus `extra`.
    static func rounds(_ count: Int, extra: [Int64], kept: (Int) -> Int64) -> [LoadRound] {
        var start = ExactCounts(liveBytes: 1 << 20, allocationCalls: 5000, allocatedBytes: 1 << 22)
        return (0..<count).map { index in
            let round = Self.round(
                1000, calls: 7000 + extra[index], bytes: 7000 * 64 + extra[index] * 64, from: start,
                live: start.liveBytes + kept(index), peak: start.liveBytes + kept(index) + 4 * 8192)
            start = round.after
            return round
        }
    }

    @Test func allocationsAndBytesPerRequestAreTheMinimumOverTheRounds() throws {
        // Noise only adds: one round with 300 stray allocations does not move the figure.
        let figures = try #require(
            PerRequestFigures(rounds: Self.rounds(3, extra: [300, 0, 12], kept: { _ in 0 }), connections: 4))
        #expect(figures.allocationsPerRequest == 7)
        #expect(figures.bytesPerRequest == 7 * 64)
        #expect(figures.peakPerConcurrentRequest == 8192)
        let metrics = figures.metrics(phase: "uploads").map(\.name)
        #expect(metrics.contains("uploadsAllocationsPerRequest") && metrics.contains("uploadsBytesPerRequest"))
        // One allocation more per request shows in the figure.
        let more = try #require(
            PerRequestFigures(rounds: Self.rounds(3, extra: [1000, 1000, 1000], kept: { _ in 0 }), connections: 4))
        #expect(more.allocationsPerRequest == 8)
    }

    @Test func liveGrowthPer1000RequestsIsTheSlopeWithItsInterval() throws {
        // 4,096 bytes kept per 1,000 requests, ±512 bytes of noise around it: the interval holds the truth.
        let noise: [Int64] = [512, -512, 256, -256, 0]
        let figures = try #require(
            PerRequestFigures(
                rounds: Self.rounds(5, extra: [0, 0, 0, 0, 0], kept: { 4096 + noise[$0] }), connections: 1))
        let growth = try #require(figures.liveGrowthPer1000Requests)
        let lower = try #require(growth.lower)
        let upper = try #require(growth.upper)
        #expect(lower < 4096 && 4096 < upper, "\(growth)")
        #expect(abs(growth.slope - 4096) < 512, "\(growth)")
        // A flat heap: the slope is 0 exactly, and so is its interval.
        let flat = try #require(
            PerRequestFigures(rounds: Self.rounds(3, extra: [0, 0, 0], kept: { _ in 0 }), connections: 1))
        #expect(flat.liveGrowthPer1000Requests == SlopeInterval([(0, 0), (1, 0), (2, 0), (3, 0)]))
        #expect(flat.liveGrowthPer1000Requests?.slope == 0 && flat.liveGrowthPer1000Requests?.upper == 0)
        // One round: a slope from two points, no interval.
        let one = try #require(
            PerRequestFigures(rounds: Self.rounds(1, extra: [0], kept: { _ in 2048 }), connections: 1))
        #expect(one.liveGrowthPer1000Requests?.slope == 2048 && one.liveGrowthPer1000Requests?.lower == nil)
        #expect(!one.metrics(phase: "load").map(\.name).contains("liveGrowthPer1000RequestsLow"))
    }

    @Test func aOneOffStepIsNotGrowthButASteadyFewBytesAre() throws {
        // Exact readings of a server that levels off (measured on the example's bounded cache): a lazily built
        // 16 B and two 64 B blocks in the first rounds, then flat, one boundary catching a 64 B block freed just
        // after. Least squares reads that as growth with an interval that excludes 0; the Theil–Sen interval holds 0.
        let kept: [Int64] = [16, 64, 64, 0, -64, 64, 0, 0, 0]
        let levelling = try #require(
            PerRequestFigures(
                rounds: Self.rounds(9, extra: Array(repeating: 0, count: 9), kept: { kept[$0] }),
                connections: 1))
        var live = 0.0
        let points =
            [(x: 0.0, y: 0.0)]
            + kept.enumerated().map { index, bytes in
                live += Double(bytes)
                return (x: Double(index + 1), y: live)
            }
        let fit = try #require(LinearFit.leastSquares(points))
        let bound = try #require(fit.slopeBound95(of: points))
        #expect(fit.slope - bound > 0, "least squares: \(fit.slope) ± \(bound)")
        let growth = try #require(levelling.liveGrowthPer1000Requests)
        let lower = try #require(growth.lower)
        let upper = try #require(growth.upper)
        #expect(lower <= 0 && 0 <= upper, "\(growth)")
        // 16 B kept per 1,000 requests, one 64 B block caught at one boundary: growth, however small.
        let steady = try #require(
            PerRequestFigures(
                rounds: Self.rounds(
                    9, extra: Array(repeating: 0, count: 9), kept: { $0 == 4 ? 80 : $0 == 5 ? -48 : 16 }),
                connections: 1))
        let small = try #require(steady.liveGrowthPer1000Requests)
        let smallLower = try #require(small.lower)
        #expect(small.slope == 16 && smallLower > 0, "\(small)")
    }

    @Test func theIntervalsTIsTwoSided95PercentByStudentsDistribution() {
        // The interval's t (`LeakAnalysis.studentT975`, a table, then a series) leaves 5% in the two tails of
        // Student's t, as its distribution function (`StudentT.twoSidedPValue`) computes it.
        for degrees in [1, 5, 30, 60] {
            let t = LeakAnalysis.studentT975(degreesOfFreedom: degrees)
            let pValue = StudentT.twoSidedPValue(t, degreesOfFreedom: degrees)
            #expect(abs(pValue - 0.05) < 0.0005, "\(degrees): t \(t), p \(pValue)")
        }
    }

    @Test func noRoundWithARequestHasNoFigures() {
        let start = ExactCounts(liveBytes: 0, allocationCalls: 0, allocatedBytes: 0)
        #expect(
            PerRequestFigures(rounds: [Self.round(0, calls: 5, bytes: 5, from: start, live: 0)], connections: 1) == nil)
        #expect(PerRequestFigures(rounds: [], connections: 1) == nil)
    }
}
