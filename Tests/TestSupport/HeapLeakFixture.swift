import HarnessModel

/// Made-up heap graphs and runs for the leak judgement's tests and its words': a strategy that tracks nothing and
/// repeats nothing, judged by its instrumented case's heap graph.
public enum HeapLeakFixture {
    /// A capture after teardown with `leaked` blocks of 1 KiB, `cycles` of them in cycles, and what no root reached
    /// before the case's work.
    public static func graph(leaked: Int, cycles: Int = 0, before: UnreachableBlocks? = nil) -> HeapGraphSummary {
        var capture = HeapCaptureSummary(label: "after teardown", timeNanoseconds: 1)
        capture.liveBlocks = 500 + leaked
        capture.liveBytes = 64 << 10
        capture.leakedBlocks = leaked
        capture.leakedBytes = leaked * 1024
        capture.cycleCount = cycles
        if leaked > 0 {
            let screen = HeapTypeName(name: "App.Screen", kind: .swiftObject)
            capture.groups = [
                HeapLeakGroup(
                    kind: cycles > 0 ? .rootCycle : .rootLeak, blocks: leaked, bytes: leaked * 1024,
                    rootBlocks: cycles > 0 ? leaked : 1, rootType: screen,
                    types: [HeapTypeTally(type: screen, count: leaked, bytes: leaked * 1024)])
            ]
        }
        return HeapGraphSummary(captures: [capture], unreachableBefore: before)
    }

    /// Three measured repetitions that track nothing and repeat nothing, and the instrumented case with `heap`.
    public static func run(expectation: LeakExpectation?, heap: HeapGraphSummary?) -> ScenarioRun {
        let measured = (1...3).map { repetition in
            CaseResult.draft(strategy: "screen", repetition: repetition, expectation: expectation) { $0.leaks = nil }
        }
        var instrumented = CaseResult.draft(strategy: "screen", repetition: 0, expectation: expectation) {
            $0.heapGraph = heap
        }
        instrumented.instrumentation = .heap
        var run = RankingFixture.run(measured, strategies: ["screen"])
        run.instrumentedCases = heap == nil ? [] : [instrumented]
        return run
    }
}
