import HarnessModel
import HeapGraph
import Testing

@Suite struct RetainingPathTests {
    /// global `ProfileStore.shared` -> `Signal.observers` -> array storage -> closure context -> `ProfileScreen`.
    static func subscription() -> GraphFixture {
        var graph = GraphFixture()
        let store = graph.block("App.ProfileStore")
        let signal = graph.block("App.Signal<App.Profile>")
        let observers = graph.block("", bytes: 64, kind: .arrayStorage)
        let closure = graph.block("", bytes: 32, kind: .closureContext)
        let screen = graph.block("App.ProfileScreen", bytes: 200)
        graph.global("App.ProfileStore.shared", store)
        graph.edge(store, signal, "signal")
        graph.edge(signal, observers, "observers", offset: 24)
        graph.edge(observers, closure, offset: 32)
        graph.edge(closure, screen, "self")
        // A stack word also points at the store: as near as the global, but globals name a path first.
        graph.stack("App.main()", store)
        return graph
    }

    @Test func anObjectKeptOnlyByAGlobalIsNotLeakedAndItsPathNamesTheGlobal() throws {
        let summary = try Self.subscription().analyse([.type(named: "ProfileScreen", reason: .trackedSurvivor)])
        #expect(summary.leakedBlocks == 0 && summary.reachableBlocks == 5)
        let path = try #require(summary.paths.first)
        #expect(path.query == "ProfileScreen" && path.reason == .trackedSurvivor)
        #expect(path.reachableInstances == 1 && path.leakedInstances == 0)
        #expect(
            path.root
                == HeapPathRoot(
                    kind: .global(symbol: "App.ProfileStore.shared", module: "App"),
                    description: "App.ProfileStore.shared"))
        #expect(
            path.nodes.map(\.type.name) == ["App.ProfileStore", "App.Signal<App.Profile>", "", "", "App.ProfileScreen"])
        #expect(
            path.nodes.map(\.type.kind) == [.swiftObject, .swiftObject, .arrayStorage, .closureContext, .swiftObject])
        #expect(path.nodes.map(\.fieldName) == ["signal", "observers", nil, "self", nil])
        #expect(path.nodes.map(\.byteOffset) == [16, 24, 32, 16, nil])
        #expect(path.nodes.last?.edgeKind == nil && path.nodes.first?.edgeKind == .strong)
    }

    @Test func thePathIsTheShortestAndLabelsUnowned() throws {
        var graph = Self.subscription()
        // A shorter way to the screen, through an unowned reference from a block on the stack.
        let coordinator = graph.block("App.Coordinator")
        graph.stack("App.run()", coordinator)
        let screen: UInt32 = 4
        graph.edge(coordinator, screen, "screen", kind: .unowned)
        let path = try #require(
            try graph.analyse([.type(named: "App.ProfileScreen", reason: .requestedType)]).paths.first)
        #expect(path.root?.kind == .threadStack(threadID: 1, threadName: "main", frameFunction: "App.run()"))
        #expect(path.nodes.map(\.type.name) == ["App.Coordinator", "App.ProfileScreen"])
        #expect(path.nodes.first?.edgeKind == .unowned)
    }

    @Test func aLeakedTargetHasNoPathButIsCounted() throws {
        var graph = Self.subscription()
        graph.block("App.ProfileScreen", bytes: 200)
        let summary = try graph.analyse([
            .type(named: "ProfileScreen", reason: .trackedSurvivor), .type(named: "Nothing", reason: .requestedType),
        ])
        #expect(summary.paths.count == 2)
        #expect(summary.paths[0].reachableInstances == 1 && summary.paths[0].leakedInstances == 1)
        #expect(
            summary.paths[1].root == nil && summary.paths[1].nodes.isEmpty && summary.paths[1].reachableInstances == 0)
    }

    @Test func aBlockTargetIsFoundByAddress() throws {
        let graph = Self.subscription()
        let snapshot = try graph.snapshot()
        let screenAddress = snapshot.addresses[4]
        let analysis = HeapAnalysis.analyse(
            snapshot, options: HeapAnalysisOptions(targets: [.block(address: screenAddress, reason: .trackedSurvivor)]))
        let path = try #require(analysis.summary.paths.first)
        #expect(path.query == "0x" + String(screenAddress, radix: 16))
        #expect(path.nodes.count == 5 && path.nodes.last?.type.name == "App.ProfileScreen")
    }
}
