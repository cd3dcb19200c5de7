import HarnessModel
import TestSupport
import Testing
import Verdicts

/// Leak verdicts backed by the heap graph: a strategy that tracks nothing and has no `repeat` step is judged by what
/// no root reaches in its instrumented case's last capture, less what no root reached before its work, and an
/// expectation no evidence decides is a failed check, never a silent nothing.
@Suite struct HeapLeakVerdictTests {
    @Test func blocksNoRootReachesAreALeakWithNothingTracked() throws {
        let run = HeapLeakFixture.run(expectation: .leakFree, heap: HeapLeakFixture.graph(leaked: 3, cycles: 1))
        let summary = try #require(StrategyLeakSummary.summaries(run).first)
        #expect(summary.verdict == .leaks && summary.outcome == .unexpectedLeak)
        #expect(summary.assessedRepetitions == 0 && summary.heap?.capture?.leakedBlocks == 3)
        let heap = try #require(summary.heap)
        #expect(summary.judgement.reasons == [.unreachable(heap)])
        #expect(heap.new == UnreachableBlocks(blocks: 3, bytes: 3072, cycles: 1))
        let check = try #require(LeakChecks.checks(run).first)
        #expect(!check.passed && check.kind == .leak)
    }

    @Test func aCleanGraphIsLeakFreeAndADeclaredLeakThatDoesNotShowIsSaid() throws {
        let clean = try #require(
            StrategyLeakSummary.summaries(
                HeapLeakFixture.run(expectation: .leakFree, heap: HeapLeakFixture.graph(leaked: 0))
            ).first)
        #expect(clean.verdict == .leakFree && clean.outcome == .asExpected)
        let missing = try #require(
            StrategyLeakSummary.summaries(
                HeapLeakFixture.run(expectation: .leaks, heap: HeapLeakFixture.graph(leaked: 0))
            )
            .first)
        #expect(missing.outcome == .expectedLeakNotSeen)
        let checks = LeakChecks.checks(HeapLeakFixture.run(expectation: .leaks, heap: HeapLeakFixture.graph(leaked: 0)))
        #expect(checks.count == 1 && checks.allSatisfy { $0.passed })
    }

    @Test func anExpectationNothingCouldAssessFailsItsCheckAndSaysWhy() throws {
        let failure = HeapCaptureFailure(label: "at exit", reason: .other, detail: "it was ended by signal 9 (SIGKILL)")
        let failed = HeapGraphSummary(captures: [], failures: [failure])
        let run = HeapLeakFixture.run(expectation: .leakFree, heap: failed)
        let summary = try #require(StrategyLeakSummary.summaries(run).first)
        #expect(summary.verdict == .notAssessed)
        #expect(summary.judgement.unassessed == .noHeapCapture(failure))
        let check = try #require(LeakChecks.checks(run).first)
        #expect(!check.passed)
        // Without an expectation, nothing was asked: no check.
        #expect(LeakChecks.checks(HeapLeakFixture.run(expectation: nil, heap: failed)).isEmpty)
        // Without an instrumented case at all: no evidence of any kind.
        let none = try #require(
            StrategyLeakSummary.summaries(HeapLeakFixture.run(expectation: .leaks, heap: nil)).first)
        #expect(none.judgement.unassessed == .noEvidence)
    }

    @Test func heapGraphFiguresComeFromTheInstrumentedCaseAndGate() throws {
        let run = HeapLeakFixture.run(expectation: .leaks, heap: HeapLeakFixture.graph(leaked: 2, cycles: 1))
        let bytes = FigureReference(strategy: "screen", figure: .leakedBytes)
        #expect(ThresholdEvaluator.values(bytes, in: run) == [2048])
        #expect(ThresholdEvaluator.values(FigureReference(strategy: "screen", figure: .leakedCycles), in: run) == [1])
        // The measured cases have no heap graph: a measured figure still reads them only.
        #expect(
            ThresholdEvaluator.values(FigureReference(strategy: "screen", figure: .peakAllocated), in: run).count == 3)
        #expect(Figure.simpleNames["leakedBlocks"] == .leakedBlocks && Figure.leakedBlocks.isHeapGraph)
        #expect(!Figure.leakedBlocks.isBytes && Figure.leakedBytes.isBytes)
    }

    @Test func anInstrumentedCaseIsJudgedByItsGraph() {
        var result = CaseResult.draft(strategy: "screen", expectation: .leakFree) {
            $0.heapGraph = HeapLeakFixture.graph(leaked: 1)
        }
        #expect(result.leakJudgement.verdict == .notAssessed)  // a measured case: its tracking decides
        result.instrumentation = .heap
        #expect(result.leakJudgement.verdict == .leaks)
    }

    @Test func whatNoRootReachedBeforeTheWorkIsNotTheWorksLeak() throws {
        // Two blocks were unreachable at the case's baseline (the runtime's own): the three after teardown hold them.
        let before = UnreachableBlocks(blocks: 2, bytes: 2048, cycles: 0)
        let same = HeapLeakFixture.run(expectation: .leakFree, heap: HeapLeakFixture.graph(leaked: 2, before: before))
        let clean = try #require(StrategyLeakSummary.summaries(same).first)
        #expect(clean.verdict == .leakFree, "\(clean.judgement.reasons)")
        let more = HeapLeakFixture.run(
            expectation: .leakFree, heap: HeapLeakFixture.graph(leaked: 5, cycles: 1, before: before))
        let leaking = try #require(StrategyLeakSummary.summaries(more).first)
        #expect(leaking.verdict == .leaks)
        #expect(leaking.heap?.new == UnreachableBlocks(blocks: 3, bytes: 3072, cycles: 1))
        // A record without the figure (made before it was kept, or a program's) subtracts nothing.
        #expect(HeapEvidence(HeapLeakFixture.graph(leaked: 2)).new.blocks == 2)
    }
}
