import HarnessModel
import Reports
import TestSupport
import Testing
import Verdicts

/// The words of leak judgements in report.md and the check table: each typed reason, what no root reaches, why a
/// strategy could not be judged, and a leak check.
@Suite struct LeakWordingTests {
    @Test func blocksNoRootReachesAreWordedOnceEverywhere() throws {
        let run = HeapLeakFixture.run(expectation: .leakFree, heap: HeapLeakFixture.graph(leaked: 3, cycles: 1))
        let summary = try #require(StrategyLeakSummary.summaries(run).first)
        #expect(
            LeakWording.reasons(summary.judgement)
                == "after teardown, 3 blocks (3.00 KiB) no root reaches, in 1 cycle; the largest group a cycle through "
                + "App.Screen (3 blocks, 3.00 KiB)")
        let check = CheckWording.result(try #require(LeakChecks.checks(run).first))
        #expect(!check.passed && check.message.contains("no root reaches"))
        #expect(check.actual == "leaks (3 blocks (3.00 KiB) no root reaches, in 1 cycle)")
    }

    @Test func theUnreachableFigureHasOneWording() throws {
        let one = HeapEvidence(HeapLeakFixture.graph(leaked: 1))
        #expect(LeakWording.unreachable(one) == "1 block (1.00 KiB) no root reaches")
        let many = HeapEvidence(HeapLeakFixture.graph(leaked: 40, cycles: 2))
        #expect(LeakWording.unreachable(many) == "40 blocks (40.00 KiB) no root reaches, in 2 cycles")
        #expect(LeakWording.reason(.unreachable(many)).hasPrefix("after teardown, " + LeakWording.unreachable(many)))
        // What no root reached before the work is said apart, and not counted.
        let before = HeapEvidence(
            HeapLeakFixture.graph(leaked: 5, cycles: 1, before: UnreachableBlocks(blocks: 2, bytes: 2048, cycles: 0)))
        #expect(
            LeakWording.unreachable(before)
                == "3 blocks (3.00 KiB) no root reaches, in 1 cycle, besides 2 blocks no root reached before")
    }

    @Test func suppressedLeaksAreCounted() throws {
        let heap = HeapEvidence(HeapLeakFixture.graph(leaked: 3, cycles: 1)).suppressing([
            LeakSuppression(.type("App.Screen"), reason: "known")
        ])
        #expect(
            LeakWording.unreachable(heap)
                == "0 blocks (0 B) no root reaches, in 1 cycle, and 1 known leak suppressed (3 blocks, 3.00 KiB)")
    }

    @Test func survivorsAndGrowthAreWordedAsBefore() throws {
        #expect(
            LeakWording.reason(.survived(TypeCount(typeName: "Screen", count: 2), tracked: 3))
                == "2 of 3 Screen survived teardown")
        let fit = SlopeFit(slopeBytesPerIteration: 100, boundBytesPerIteration: 0, iterations: 4)
        #expect(
            LeakWording.reason(.grows(phase: "screens", warmupIterations: 1, fit: fit))
                == "screens: live heap grows 100 B ± 0 B per iteration")
    }

    @Test func anExpectationNothingCouldAssessSaysWhy() throws {
        let failed = HeapGraphSummary(
            captures: [],
            failures: [
                HeapCaptureFailure(label: "at exit", reason: .other, detail: "it was ended by signal 9 (SIGKILL)")
            ])
        let run = HeapLeakFixture.run(expectation: .leakFree, heap: failed)
        let summary = try #require(StrategyLeakSummary.summaries(run).first)
        #expect(
            LeakWording.reasons(summary.judgement)
                == "nothing tracked, no repeat step, and the heap graph has no capture: it was ended by signal 9 (SIGKILL)"
        )
        let check = CheckWording.result(try #require(LeakChecks.checks(run).first))
        #expect(!check.passed && check.actual == "not assessed")
        #expect(check.message.contains("could not be assessed"), "\(check.message)")
        #expect(
            LeakWording.unassessed(.noEvidence) == "nothing tracked, no repeat step, and no heap graph was captured")
    }
}
