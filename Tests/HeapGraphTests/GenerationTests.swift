import HarnessModel
import HeapGraph
import Testing

@Suite struct GenerationTests {
    /// Iteration `n` of a screen that is pushed and never popped: `n` screens (each with its closure),
    /// kept by a global array; `n % 2 + 1` temporary buffers; always 5 cache entries.
    static func iteration(_ n: Int) throws -> HeapSnapshot {
        var graph = GraphFixture(label: "iteration \(n)")
        let navigation = graph.block("App.Navigation")
        graph.global("App.Navigation.shared", navigation)
        let stack = graph.block("", bytes: 64, kind: .arrayStorage)
        graph.edge(navigation, stack, "screens")
        for index in 0..<n {
            let screen = graph.block("App.Screen", bytes: 100)
            graph.edge(stack, screen, offset: 32 + 8 * index)
            let closure = graph.block("", bytes: 32, kind: .closureContext)
            graph.edge(screen, closure, "onTap")
        }
        for _ in 0..<(n % 2 + 1) { graph.global("App.temp", graph.block("App.Buffer", bytes: 16)) }
        for _ in 0..<5 { graph.global("App.cache", graph.block("App.CacheEntry", bytes: 8)) }
        return try graph.snapshot()
    }

    @Test func aTypeThatGrowsInEveryIterationIsASuspectWithItsPath() throws {
        var tracker = HeapGenerationTracker()
        for n in 1...3 { tracker.add(try Self.iteration(n)) }
        let summary = tracker.summary
        #expect(summary.generationLabels == ["iteration 1", "iteration 2", "iteration 3"])
        let screen = try #require(summary.growth.first { $0.type == .object("App.Screen") })
        #expect(screen.counts == [1, 2, 3] && screen.bytes == [100, 200, 300] && screen.isSuspect)
        #expect(screen.countDeltas == [1, 1] && screen.byteDeltas == [100, 100])
        let buffer = try #require(summary.growth.first { $0.type == .object("App.Buffer") })
        #expect(buffer.counts == [2, 1, 2] && !buffer.isSuspect)
        #expect(!summary.growth.contains { $0.type == .object("App.CacheEntry") })
        #expect(
            Set(summary.suspects) == [
                .object("App.Screen"), HeapTypeName(name: "", kind: .closureContext, unnamedBlockBytes: 32),
            ])
        // Suspects first.
        #expect(summary.growth.prefix(2).allSatisfy { $0.isSuspect })
        let last = try #require(summary.last)
        #expect(last.leakedBlocks == 0)
        let path = try #require(last.paths.first { $0.query == "App.Screen" })
        #expect(path.reason == .growingType && path.reachableInstances == 3)
        #expect(path.root?.description == "App.Navigation.shared")
        #expect(path.nodes.map(\.fieldName) == ["screens", nil, nil])
        // A suspect without a name keeps its exact type on its path, for the report to say what it is.
        let closure = HeapTypeName(name: "", kind: .closureContext, unnamedBlockBytes: 32)
        #expect(last.paths.contains { $0.reason == .growingType && $0.type == closure && $0.query.isEmpty })
    }

    @Test func oneStepUpIsAChangeNotASuspect() throws {
        var tracker = HeapGenerationTracker()
        for n in 1...2 { tracker.add(try Self.iteration(n)) }
        #expect(tracker.summary.suspects.isEmpty)
        #expect(tracker.summary.growth.contains { $0.type == .object("App.Screen") })
    }

    @Test func aCaptureOutsideTheGenerationsIsNotCompared() throws {
        var tracker = HeapGenerationTracker()
        for n in 1...3 { tracker.add(try Self.iteration(n)) }
        tracker.add(try Self.iteration(0), isGeneration: false)
        tracker.recordFailure(HeapCaptureFailure(label: "iteration 4", reason: .timedOut, detail: "no reply in 5 s"))
        let summary = tracker.summary
        #expect(summary.captures.count == 4 && summary.generationLabels.count == 3)
        #expect(summary.suspects.contains(.object("App.Screen")))
        #expect(summary.failures.map(\.reason) == [.timedOut])
        #expect(summary.leakedBlocks == 0 && summary.cycleCount == 0 && summary.last?.label == "iteration 0")
        #expect(HeapGraphSummary(captures: []).leakedBytes == nil)
    }

    @Test func aCaptureResultIsAnalysedOrRecordedAsAFailure() throws {
        var tracker = HeapGenerationTracker()
        tracker.add(.snapshot(try Self.iteration(1)), isGeneration: true)
        tracker.add(
            .failure(HeapCaptureFailure(label: "after teardown", reason: .unreadable, detail: "truncated")),
            isGeneration: false)
        let summary = tracker.summary
        #expect(summary.captures.map(\.label) == ["iteration 1"] && summary.generationLabels == ["iteration 1"])
        #expect(summary.failures.map(\.label) == ["after teardown"])
    }

    @Test func aCaseAsksForTheRequestedTypesThenItsSurvivors() {
        let options = HeapAnalysisOptions(
            retainedBy: ["Cache"],
            survivors: [TypeCount(typeName: "Screen", count: 2), TypeCount(typeName: "Gone", count: 0)])
        #expect(
            options.targets == [
                .type(named: "Cache", reason: .requestedType), .type(named: "Screen", reason: .trackedSurvivor),
            ])
    }
}
