import HarnessModel
import TestSupport
import Testing
import Verdicts

/// The one leak judgement over made-up evidence: each reason, what no root reached before, repetitions and the
/// instrumented case together, and why nothing could be judged.
@Suite struct LeakJudgementTests {
    static let screens = [TypeCount(typeName: "Screen", count: 4)]
    static let growing = GrowthSeries(
        phase: "screens", warmupIterations: 1, liveBytesAfterIteration: [0, 100, 200, 300, 400, 500])
    static let flat = GrowthSeries(
        phase: "screens", warmupIterations: 1, liveBytesAfterIteration: [0, 100, 100, 100, 100, 100])

    /// A capture with `leaked` unreachable blocks of 1 KiB in `cycles` cycles.
    static func heap(leaked: Int, cycles: Int = 0, before: UnreachableBlocks = .none) -> HeapEvidence {
        HeapEvidence(HeapLeakFixture.graph(leaked: leaked, cycles: cycles, before: before))
    }

    static func repetition(_ number: Int, survivors: Int = 0, growth: GrowthSeries = flat) -> LeakEvidence {
        LeakEvidence(
            source: .repetition(number), tracked: screens,
            survivors: survivors > 0 ? [TypeCount(typeName: "Screen", count: survivors)] : [], growth: [growth])
    }

    @Test func eachKindOfEvidenceIsAReasonOfItsOwn() throws {
        let fit = try #require(Self.growing.fit)
        let heap = Self.heap(leaked: 3, cycles: 1)
        let all = LeakEvidence(
            source: .closure, tracked: Self.screens, survivors: [TypeCount(typeName: "Screen", count: 1)],
            growth: [Self.growing], heap: heap)
        let judgement = LeakJudgement([all], expectation: .leakFree)
        #expect(judgement.verdict == .leaks && judgement.isFinding)
        #expect(
            judgement.reasons == [
                .survived(TypeCount(typeName: "Screen", count: 1), tracked: 4),
                .grows(phase: "screens", warmupIterations: 1, fit: fit),
                .unreachable(heap),
            ])
        // Each alone is enough.
        for evidence in [
            LeakEvidence(source: .closure, tracked: Self.screens, survivors: [TypeCount(typeName: "Screen", count: 1)]),
            LeakEvidence(source: .closure, growth: [Self.growing]), LeakEvidence(source: .closure, heap: heap),
        ] {
            #expect(LeakJudgement([evidence], expectation: nil).verdict == .leaks, "\(evidence)")
        }
        // And none of them with nothing to show.
        let clean = LeakEvidence(
            source: .closure, tracked: Self.screens, growth: [Self.flat], heap: Self.heap(leaked: 0))
        #expect(LeakJudgement([clean], expectation: .leakFree).verdict == .leakFree)
    }

    @Test func whatNoRootReachedBeforeIsSubtracted() {
        let before = UnreachableBlocks(blocks: 4, bytes: 4096, cycles: 1)
        // As many unreachable blocks as before: nothing new, no leak.
        let same = LeakEvidence(source: .closure, heap: Self.heap(leaked: 4, cycles: 1, before: before))
        #expect(LeakJudgement([same], expectation: .leakFree).verdict == .leakFree)
        // One more than before: a leak of one block, one cycle more.
        let one = Self.heap(leaked: 5, cycles: 2, before: before)
        #expect(one.new == UnreachableBlocks(blocks: 1, bytes: 1024, cycles: 1))
        #expect(LeakJudgement([LeakEvidence(source: .closure, heap: one)], expectation: .leakFree).verdict == .leaks)
        // Fewer than before (a stale word that kept one of them before): never negative.
        #expect(Self.heap(leaked: 2, before: before).new == .none)
    }

    @Test func aStrategyLeaksWhenOneRepetitionDoesAndSaysWhichFirst() {
        let evidence = [
            Self.repetition(1), Self.repetition(2, survivors: 2), Self.repetition(3, survivors: 3),
            LeakEvidence(source: .instrumented, heap: Self.heap(leaked: 0)),
        ]
        let judgement = LeakJudgement(evidence, expectation: .leakFree)
        #expect(judgement.verdict == .leaks)
        #expect(judgement.assessedRepetitions == 3 && judgement.leakingRepetitions == 2)
        // The first leaking repetition's reasons (not the third's), and the clean heap graph adds none.
        #expect(judgement.reasons == [.survived(TypeCount(typeName: "Screen", count: 2), tracked: 4)])
    }

    @Test func theInstrumentedCasesGraphAddsItsReasonAfterTheRepetitions() {
        let heap = Self.heap(leaked: 2, cycles: 1)
        let evidence = [
            LeakEvidence(source: .instrumented, heap: heap), Self.repetition(1, survivors: 1), Self.repetition(2),
        ]
        let judgement = LeakJudgement(evidence, expectation: .leaks)
        #expect(judgement.outcome == .asExpected && !judgement.isFinding)
        #expect(
            judgement.reasons == [.survived(TypeCount(typeName: "Screen", count: 1), tracked: 4), .unreachable(heap)])
        // The graph alone decides when no repetition gathered evidence: no repetition is counted.
        let alone = LeakJudgement(
            [LeakEvidence(source: .repetition(1)), LeakEvidence(source: .instrumented, heap: heap)],
            expectation: .leakFree)
        #expect(alone.verdict == .leaks && alone.assessedRepetitions == 0)
    }

    @Test func evidenceWithoutAnythingToShowIsNotJudgedAndSaysWhy() {
        #expect(LeakJudgement([], expectation: .leakFree).unassessed == .noEvidence)
        let failure = HeapCaptureFailure(label: "after teardown", reason: .timedOut, detail: "took over 10 s")
        let failed = LeakEvidence(source: .instrumented, heap: HeapEvidence(capture: nil, failure: failure))
        let judgement = LeakJudgement([LeakEvidence(source: .repetition(1)), failed], expectation: .leakFree)
        #expect(judgement.verdict == .notAssessed && judgement.outcome == .notAssessed)
        #expect(judgement.unassessed == .noHeapCapture(failure))
        #expect(!judgement.isFinding)
        // Evidence of another kind in the same strategy still decides.
        let tracked = LeakJudgement([Self.repetition(1), failed], expectation: .leakFree)
        #expect(tracked.verdict == .leakFree && tracked.unassessed == nil)
    }

    @Test(arguments: [
        (LeakVerdict.leaks, LeakExpectation?.some(.leaks), LeakOutcome.asExpected),
        (.leaks, .some(.leakFree), .unexpectedLeak), (.leaks, nil, .unexpectedLeak),
        (.leakFree, .some(.leaks), .expectedLeakNotSeen), (.leakFree, nil, .asExpected),
        (.notAssessed, .some(.leakFree), .notAssessed),
    ])
    func theOutcomeSetsTheVerdictAgainstTheExpectation(
        verdict: LeakVerdict, expectation: LeakExpectation?, outcome: LeakOutcome
    ) {
        #expect(LeakJudgement.outcome(verdict: verdict, expectation: expectation) == outcome)
    }

    @Test func aCaseIsJudgedByTheSameRule() {
        let leaking = CaseResult.draft(strategy: "a", expectation: .leakFree) {
            $0.leaks = LeakMeasurements(tracked: Self.screens, survivors: [TypeCount(typeName: "Screen", count: 1)])
        }
        #expect(leaking.leakJudgement.verdict == .leaks && leaking.leakJudgement.isFinding)
        let killed = CaseResult.draft(strategy: "a", status: .crashed)
        #expect(killed.leakJudgement.verdict == .notAssessed)
    }
}
