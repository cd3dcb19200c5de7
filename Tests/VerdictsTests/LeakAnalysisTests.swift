import HarnessModel
import TestSupport
import Testing
import Verdicts

@Suite struct SlopeFitTests {
    @Test func pointsOnALineGiveTheirSlopeWithNoSpread() throws {
        let fit = try #require(LeakAnalysis.fitSlope([1000, 1512, 2024, 2536, 3048]))
        #expect(fit.slopeBytesPerIteration == 512)
        #expect(fit.boundBytesPerIteration == 0)
        #expect(fit.iterations == 5)
    }

    @Test func noisyLineMatchesTheHandComputedFit() throws {
        // y = 10x + noise [1, -1, 0, 1, -1]: slope 98/10, residual sum of squares 3.6,
        // standard error sqrt(3.6 / 3 / 10), t(3) = 3.182.
        let fit = try #require(LeakAnalysis.fitSlope([1, 9, 20, 31, 39]))
        #expect(abs(fit.slopeBytesPerIteration - 9.8) < 1e-9)
        #expect(abs(fit.boundBytesPerIteration - 3.182 * (0.12 as Double).squareRoot()) < 1e-9)
    }

    @Test func flatDataHasNoGrowth() throws {
        let fit = try #require(LeakAnalysis.fitSlope(Array(repeating: 4_000_000, count: 17)))
        #expect(fit.slopeBytesPerIteration == 0)
        #expect(!LeakCriteria.standard.isGrowing(fit))
    }

    @Test func fewerThanThreePointsCannotBeBounded() {
        #expect(LeakAnalysis.fitSlope([]) == nil)
        #expect(LeakAnalysis.fitSlope([1, 2]) == nil)
    }

    @Test func noiseAroundAFlatLineStaysWithinTheBound() throws {
        let fit = try #require(LeakAnalysis.fitSlope([100, 140, 90, 130, 80, 120, 110, 95, 135, 100]))
        #expect(fit.boundBytesPerIteration > 0)
        #expect(!LeakCriteria.standard.isGrowing(fit))
    }

    @Test func warmUpKeepsFirstUseGrowthOutOfTheFit() throws {
        // Lazy globals and framework caches fill over the first iterations, then nothing grows.
        let live = [0, 30_000, 45_000] + Array(repeating: 52_000, count: 9)
        let withoutWarmUp = try #require(
            GrowthSeries(phase: "repeat", warmupIterations: 0, liveBytesAfterIteration: live).fit)
        #expect(LeakCriteria.standard.isGrowing(withoutWarmUp), "fitted, first-use growth must look like growth")
        let withWarmUp = try #require(
            GrowthSeries(phase: "repeat", warmupIterations: 3, liveBytesAfterIteration: live).fit)
        #expect(withWarmUp.slopeBytesPerIteration == 0)
        #expect(!LeakCriteria.standard.isGrowing(withWarmUp))
        #expect(withWarmUp.iterations == 9)
    }

    @Test func slopesUnderTheMinimumAreNotLeaks() {
        let fit = SlopeFit(slopeBytesPerIteration: 12, boundBytesPerIteration: 0, iterations: 10)
        #expect(!LeakCriteria.standard.isGrowing(fit))
        #expect(LeakCriteria(minimumSlopeBytesPerIteration: 8).isGrowing(fit))
    }

    @Test(arguments: [
        (1, 12.706), (3, 3.182), (10, 2.228), (30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980), (100_000, 1.960),
    ])
    func studentQuantileMatchesTables(degreesOfFreedom: Int, expected: Double) {
        #expect(abs(LeakAnalysis.studentT975(degreesOfFreedom: degreesOfFreedom) - expected) < 0.001)
    }
}

@Suite struct LeakVerdictTests {
    static let growing = GrowthSeries(
        phase: "screens", warmupIterations: 1, liveBytesAfterIteration: [0, 100, 200, 300, 400])
    static let flat = GrowthSeries(
        phase: "screens", warmupIterations: 1, liveBytesAfterIteration: [0, 100, 100, 100, 100])

    /// One repetition's measurements judged alone.
    static func judge(_ measurements: LeakMeasurements?, expectation: LeakExpectation?) -> LeakJudgement {
        LeakJudgement([LeakEvidence(source: .repetition(1), measurements: measurements)], expectation: expectation)
    }

    @Test func aSurvivorIsALeak() {
        let measurements = LeakMeasurements(
            tracked: [TypeCount(typeName: "Screen", count: 3)],
            survivors: [TypeCount(typeName: "Screen", count: 2)])
        let judgement = Self.judge(measurements, expectation: .leakFree)
        #expect(judgement.verdict == .leaks)
        #expect(judgement.outcome == .unexpectedLeak)
        #expect(judgement.isFinding)
        #expect(judgement.reasons == [.survived(TypeCount(typeName: "Screen", count: 2), tracked: 3)])
    }

    @Test func growthIsALeakEvenWithoutSurvivors() throws {
        let measurements = LeakMeasurements(tracked: [TypeCount(typeName: "Screen", count: 5)], growth: [Self.growing])
        let judgement = Self.judge(measurements, expectation: .leaks)
        #expect(judgement.verdict == .leaks)
        #expect(judgement.outcome == .asExpected)
        #expect(!judgement.isFinding)
        let fit = try #require(Self.growing.fit)
        #expect(judgement.reasons == [.grows(phase: "screens", warmupIterations: 1, fit: fit)])
        #expect(fit.slopeBytesPerIteration == 100 && fit.boundBytesPerIteration == 0)
    }

    @Test func noSurvivorsAndFlatGrowthIsLeakFree() {
        let measurements = LeakMeasurements(tracked: [TypeCount(typeName: "Screen", count: 5)], growth: [Self.flat])
        #expect(Self.judge(measurements, expectation: .leakFree).outcome == .asExpected)
        let missing = Self.judge(measurements, expectation: .leaks)
        #expect(missing.verdict == .leakFree)
        #expect(missing.outcome == .expectedLeakNotSeen)
        #expect(!missing.isFinding)
    }

    @Test func withoutEvidenceThereIsNoVerdict() {
        #expect(Self.judge(nil, expectation: .leakFree).verdict == .notAssessed)
        #expect(Self.judge(LeakMeasurements(), expectation: nil).outcome == .notAssessed)
        #expect(Self.judge(nil, expectation: .leakFree).unassessed == .noEvidence)
    }

    @Test func anUnstatedExpectationTreatsALeakAsAFinding() {
        let measurements = LeakMeasurements(
            tracked: [TypeCount(typeName: "Screen", count: 1)],
            survivors: [TypeCount(typeName: "Screen", count: 1)])
        #expect(Self.judge(measurements, expectation: nil).isFinding)
    }

    @Test func residueUncertaintyIsTheLargerThreadCacheReading() {
        let measurements = LeakMeasurements(threadCacheBytesAtBaseline: 4096, threadCacheBytesAtEnd: 12_288)
        #expect(measurements.residueUncertaintyBytes == 12_288)
    }
}

@Suite struct StrategyLeakSummaryTests {
    static func result(
        _ strategy: String, repetition: Int, survivors: Int, growth: GrowthSeries,
        expectation: LeakExpectation?, status: CaseStatus = .ok
    ) -> CaseResult {
        CaseResult.draft(strategy: strategy, repetition: repetition, status: status, expectation: expectation) {
            result in
            result.residueBytes = 1000 * repetition
            result.leaks = LeakMeasurements(
                tracked: [TypeCount(typeName: "Screen", count: 4)],
                survivors: survivors > 0 ? [TypeCount(typeName: "Screen", count: survivors)] : [],
                growth: [growth], threadCacheBytesAtBaseline: 100 * repetition, threadCacheBytesAtEnd: 50)
        }
    }

    @Test func aLeakInOneRepetitionMakesTheStrategyLeak() {
        let cases = [
            Self.result("clean", repetition: 1, survivors: 0, growth: LeakVerdictTests.flat, expectation: .leakFree),
            Self.result("clean", repetition: 2, survivors: 1, growth: LeakVerdictTests.flat, expectation: .leakFree),
            Self.result("clean", repetition: 3, survivors: 0, growth: LeakVerdictTests.flat, expectation: .leakFree),
            Self.result(
                "clean", repetition: 4, survivors: 4, growth: LeakVerdictTests.growing, expectation: .leakFree,
                status: .crashed),
        ]
        let summary = StrategyLeakSummary(strategy: "clean", cases: cases)
        #expect(summary.assessedRepetitions == 3)
        #expect(summary.leakingRepetitions == 1)
        #expect(summary.verdict == .leaks)
        #expect(summary.outcome == .unexpectedLeak)
        #expect(summary.tracked == [TypeCountRange(typeName: "Screen", minimum: 4, maximum: 4)])
        #expect(summary.survivors == [TypeCountRange(typeName: "Screen", minimum: 0, maximum: 1)])
        #expect(summary.medianResidueBytes == 2000)
        #expect(summary.residueUncertaintyBytes == 300)
        #expect(
            summary.growth == [
                GrowthSummary(phase: "screens", medianSlopeBytesPerIteration: 0, medianBoundBytesPerIteration: 0)
            ])
        #expect(summary.judgement.reasons == [.survived(TypeCount(typeName: "Screen", count: 1), tracked: 4)])
    }

    @Test func aStrategyWithoutOkCasesIsNotAssessed() {
        let cases = [
            Self.result(
                "gone", repetition: 1, survivors: 0, growth: LeakVerdictTests.flat, expectation: .leaks, status: .failed
            )
        ]
        let summary = StrategyLeakSummary(strategy: "gone", cases: cases)
        #expect(summary.verdict == .notAssessed)
        #expect(summary.expectation == .leaks)
    }
}

@Suite struct OneOffJumpTests {
    @Test func aStepAfterTheWarmUpIsLeftOutOfTheGrowth() throws {
        // A thread starts at iteration 9 and gets its 28 KiB allocator cache; nothing else grows.
        let live: [Double] = Array(repeating: 5_000_000, count: 9) + Array(repeating: 5_028_672, count: 8)
        let plain = try #require(LeakAnalysis.fitSlope(live))
        #expect(LeakCriteria.standard.isGrowing(plain), "a least-squares line through the step must look like growth")
        let fit = try #require(LeakAnalysis.fitGrowth(live))
        #expect(fit.slopeBytesPerIteration == 0)
        #expect(fit.boundBytesPerIteration == 0)
        #expect(fit.oneOffJumps == 1)
        #expect(fit.oneOffJumpBytes == 28_672)
        #expect(!LeakCriteria.standard.isGrowing(fit))
    }

    @Test func aStepOnTopOfASteadyLeakKeepsTheLeaksSlope() throws {
        var live: [Double] = (0..<17).map { 1_000_000 + Double($0) * 82_432 }
        for index in 6..<17 { live[index] += 28_672 }
        let fit = try #require(LeakAnalysis.fitGrowth(live))
        #expect(fit.slopeBytesPerIteration == 82_432)
        #expect(fit.oneOffJumps == 1)
        #expect(LeakCriteria.standard.isGrowing(fit))
    }

    @Test func aDropWhenAThreadExitsIsLeftOutToo() throws {
        let live: [Double] = (0..<12).map { 2_000_000 + Double($0) * 4_160 - ($0 >= 4 ? 28_672 : 0) }
        let fit = try #require(LeakAnalysis.fitGrowth(live))
        #expect(fit.slopeBytesPerIteration == 4_160)
        #expect(fit.oneOffJumpBytes == -28_672)
    }

    @Test func smallDeviationsAreNoise() {
        let live: [Double] = [0, 82_464, 164_992, 247_424, 329_920, 412_352, 495_008, 577_440]
        #expect(LeakAnalysis.removeOneOffJumps(live).jumps == 0)
    }

    @Test func frequentJumpsAreThePatternAndStayIn() throws {
        // Every third iteration grows by 64 KiB: a leak in bursts, not a one-off.
        let live: [Double] = (0..<13).map { Double($0 / 3) * 65_536 }
        let result = LeakAnalysis.removeOneOffJumps(live)
        #expect(result.jumps == 0)
        #expect(result.values == live)
        let fit = try #require(LeakAnalysis.fitGrowth(live))
        #expect(LeakCriteria.standard.isGrowing(fit))
    }
}
