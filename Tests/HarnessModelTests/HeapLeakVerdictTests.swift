import HarnessModel
import TestSupport
import Testing

/// Leak verdicts backed by the heap graph: a strategy that tracks nothing and has no `repeat` step is assessed by
/// what no root reaches in its instrumented case's last capture, and an expectation no evidence decides is a failed
/// check, never a silent nothing.
@Suite struct HeapLeakVerdictTests {
    /// A capture after teardown with `leaked` blocks of 1 KiB, `cycles` of them in cycles.
    static func graph(leaked: Int, cycles: Int = 0) -> HeapGraphSummary {
        var capture = HeapCaptureSummary(label: "after teardown", timeNanoseconds: 1)
        capture.liveBlocks = 500 + leaked
        capture.liveBytes = 64 << 10
        capture.leakedBlocks = leaked
        capture.leakedBytes = leaked * 1024
        capture.cycleCount = cycles
        if leaked > 0 {
            capture.groups = [
                HeapLeakGroup(
                    kind: cycles > 0 ? .rootCycle : .rootLeak, blocks: leaked, bytes: leaked * 1024,
                    rootBlocks: cycles > 0 ? leaked : 1,
                    rootType: HeapTypeName(name: "App.Screen", kind: .swiftObject),
                    types: [
                        HeapTypeTally(
                            type: HeapTypeName(name: "App.Screen", kind: .swiftObject), count: leaked,
                            bytes: leaked * 1024)
                    ])
            ]
        }
        return HeapGraphSummary(captures: [capture])
    }

    /// Three measured repetitions that track nothing and repeat nothing, and the instrumented case with `heap`.
    static func run(expectation: LeakExpectation?, heap: HeapGraphSummary?) -> ScenarioRun {
        let measured = (1...3).map { repetition in
            CaseResult.draft(strategy: "screen", repetition: repetition, expectation: expectation) { $0.leaks = nil }
        }
        var instrumented = CaseResult.draft(strategy: "screen", repetition: 4, expectation: expectation) {
            $0.heapGraph = heap
        }
        instrumented.attributed = true
        var run = RankingFixture.run(measured, strategies: ["screen"])
        run.attributedCases = heap == nil ? [] : [instrumented]
        return run
    }

    @Test func blocksNoRootReachesAreALeakWithNothingTracked() throws {
        let run = Self.run(expectation: .leakFree, heap: Self.graph(leaked: 3, cycles: 1))
        let summary = try #require(StrategyLeakSummary.summaries(run).first)
        #expect(summary.verdict == .leaks && summary.outcome == .unexpectedLeak)
        #expect(summary.assessedRepetitions == 0 && summary.heapGraph?.leakedBlocks == 3)
        #expect(
            summary.reasons == [
                "after teardown, 3 blocks (3.00 KiB) no root reaches, in 1 cycle; the largest group a cycle through "
                    + "App.Screen (3 blocks, 3.00 KiB)"
            ])
        let check = try #require(LeakChecks.checks(run).first)
        #expect(!check.passed && check.message.contains("no root reaches"))
        #expect(check.actual == "leaks (3 blocks (3.00 KiB) no root reaches, in 1 cycle)")
    }

    @Test func theUnreachableFigureHasOneWording() throws {
        let one = try #require(Self.graph(leaked: 1).last)
        #expect(LeakAnalysis.unreachable(one) == "1 block (1.00 KiB) no root reaches")
        let many = try #require(Self.graph(leaked: 40, cycles: 2).last)
        #expect(LeakAnalysis.unreachable(many) == "40 blocks (40.00 KiB) no root reaches, in 2 cycles")
        #expect(LeakAnalysis.reason(many).hasPrefix("after teardown, " + LeakAnalysis.unreachable(many) + "; "))
    }

    @Test func aCleanGraphIsLeakFreeAndADeclaredLeakThatDoesNotShowIsSaid() throws {
        let clean = try #require(
            StrategyLeakSummary.summaries(Self.run(expectation: .leakFree, heap: Self.graph(leaked: 0))).first)
        #expect(clean.verdict == .leakFree && clean.outcome == .asExpected)
        let missing = try #require(
            StrategyLeakSummary.summaries(Self.run(expectation: .leaks, heap: Self.graph(leaked: 0))).first)
        #expect(missing.outcome == .expectedLeakNotSeen)
    }

    @Test func anExpectationNothingCouldAssessFailsItsCheckAndSaysWhy() throws {
        let failed = HeapGraphSummary(
            captures: [],
            failures: [
                HeapCaptureFailure(label: "at exit", reason: .other, detail: "it was ended by signal 9 (SIGKILL)")
            ])
        let run = Self.run(expectation: .leakFree, heap: failed)
        let summary = try #require(StrategyLeakSummary.summaries(run).first)
        #expect(summary.verdict == .notAssessed)
        #expect(summary.reasons.joined().contains("it was ended by signal 9"), "\(summary.reasons)")
        let check = try #require(LeakChecks.checks(run).first)
        #expect(!check.passed && check.actual == "not assessed")
        #expect(check.message.contains("could not be assessed"), "\(check.message)")
        // Without an expectation, nothing was asked: no check.
        #expect(LeakChecks.checks(Self.run(expectation: nil, heap: failed)).isEmpty)
    }

    @Test func heapGraphFiguresComeFromTheInstrumentedCaseAndGate() throws {
        let run = Self.run(expectation: .leaks, heap: Self.graph(leaked: 2, cycles: 1))
        let bytes = FigureReference(strategy: "screen", figure: .leakedBytes)
        #expect(ThresholdEvaluator.values(bytes, in: run) == [2048])
        #expect(ThresholdEvaluator.values(FigureReference(strategy: "screen", figure: .leakedCycles), in: run) == [1])
        // The measured cases have no heap graph: a measured figure still reads them only.
        #expect(
            ThresholdEvaluator.values(FigureReference(strategy: "screen", figure: .peakAllocated), in: run).count == 3)
        #expect(Figure.simpleNames["leakedBlocks"] == .leakedBlocks && Figure.leakedBlocks.isHeapGraph)
        #expect(!Figure.leakedBlocks.isBytes && Figure.leakedBytes.isBytes)
    }

    @Test func anInstrumentedCaseIsAssessedByItsGraph() {
        var result = CaseResult.draft(strategy: "screen", expectation: .leakFree) {
            $0.heapGraph = Self.graph(leaked: 1)
        }
        #expect(result.leakAssessment.verdict == .notAssessed)  // a measured case: its tracking decides
        result.attributed = true
        #expect(result.leakAssessment.verdict == .leaks)
    }
}
