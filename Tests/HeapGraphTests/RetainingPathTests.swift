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

    /// A nearer stack word does not hide the global that owns the object: named roots are walked first.
    @Test func aGlobalIsPreferredToANearerStackWord() throws {
        var graph = Self.subscription()
        let coordinator = graph.block("App.Coordinator")
        graph.stack("App.run()", coordinator)
        let screen: UInt32 = 4
        graph.edge(coordinator, screen, "screen")
        let path = try #require(
            try graph.analyse([.type(named: "App.ProfileScreen", reason: .requestedType)]).paths.first)
        #expect(path.root?.kind == .global(symbol: "App.ProfileStore.shared", module: "App"))
        #expect(path.nodes.count == 5 && path.roots?.count == 1 && path.roots?.first?.instances == 1)
        #expect(!path.onlyConservativeRoots)
    }

    @Test func aPathFromAFrameLabelsUnowned() throws {
        var graph = GraphFixture()
        let coordinator = graph.block("App.Coordinator")
        let screen = graph.block("App.ProfileScreen", bytes: 200)
        graph.stack("App.run()", coordinator)
        graph.edge(coordinator, screen, "screen", kind: .unowned)
        let path = try #require(
            try graph.analyse([.type(named: "App.ProfileScreen", reason: .requestedType)]).paths.first)
        #expect(path.root?.kind == .threadStack(threadID: 1, threadName: "main", frameFunction: "App.run()"))
        #expect(path.nodes.map(\.type.name) == ["App.Coordinator", "App.ProfileScreen"])
        #expect(path.nodes.first?.edgeKind == .unowned)
    }

    /// Screens kept from three places: a global cache (5), a known frame (2) and a stack word in no known frame (1).
    static func screensFromThreeRoots(_ graph: inout GraphFixture) {
        let cache = graph.block("", bytes: 128, kind: .arrayStorage)
        graph.global("App.screenCache", cache)
        for slot in 0..<5 {
            let screen = graph.block("App.Screen")
            graph.edge(cache, screen, offset: 32 + 8 * slot)
        }
        for _ in 0..<2 {
            let screen = graph.block("App.Screen")
            graph.stack("App.present()", screen)
        }
        let screen = graph.block("App.Screen")
        graph.builder.addRoot(
            .threadStack(threadID: 2, threadName: nil, frameFunction: nil), description: "thread 2 stack",
            block: screen, slotAddress: 0x7ff1_0000)
    }

    @Test func distinctRootsAreCountedMostFirst() throws {
        var graph = GraphFixture()
        Self.screensFromThreeRoots(&graph)
        let path = try #require(try graph.analyse([.type(named: "Screen", reason: .requestedType)]).paths.first)
        #expect(path.reachableInstances == 8 && path.root?.kind == .global(symbol: "App.screenCache", module: "App"))
        #expect(path.roots?.map(\.instances) == [5, 2, 1] && path.omittedRoots == 0)
        #expect(
            path.roots?.map(\.root.description) == ["App.screenCache", "thread 1 in App.present()", "thread 2 stack"])
        var limits = HeapGraphLimits()
        limits.maximumRootsPerPath = 2
        let bounded = try #require(
            try graph.analyse([.type(named: "Screen", reason: .requestedType)], limits: limits).paths.first)
        #expect(bounded.roots?.count == 2 && bounded.omittedRoots == 1)
    }

    @Test func anObjectHeldOnlyByAnUnnamedStackWordSaysSo() throws {
        var graph = GraphFixture()
        let settings = graph.block("App.Settings")
        let screen = graph.block("App.Screen")
        graph.global("App.settings", settings)
        graph.builder.addRoot(
            .threadStack(threadID: 2, threadName: nil, frameFunction: nil), description: "thread 2 stack",
            block: screen, slotAddress: 0x7ff1_0000)
        let path = try #require(try graph.analyse([.type(named: "Screen", reason: .requestedType)]).paths.first)
        #expect(path.reachableInstances == 1 && path.onlyConservativeRoots)
        let named = try #require(try graph.analyse([.type(named: "Settings", reason: .requestedType)]).paths.first)
        #expect(named.reachableInstances == 1 && !named.onlyConservativeRoots)
    }

    /// Generation `k` has `k` items at the same addresses as before: the old ones kept directly by `App.archive`,
    /// the new one by `App.cache` through a store. The growing type's path explains the item that grew.
    @Test func aGrowingTypesPathGoesToTheBlocksThatGrew() throws {
        var tracker = HeapGenerationTracker()
        var last: HeapCaptureSummary?
        for generation in 1...3 {
            var graph = GraphFixture(label: "iteration \(generation)")
            let store = graph.block("App.Store")
            graph.global("App.cache", store)
            for index in 0..<generation {
                let item = graph.block("App.Item", bytes: 64)
                if index == generation - 1 {
                    graph.edge(store, item, "latest")
                } else {
                    graph.global("App.archive", item)
                }
            }
            last = tracker.add(try graph.snapshot())
        }
        let path = try #require(last?.paths.first { $0.reason == .growingType && $0.query == "App.Item" })
        #expect(path.reachableInstances == 3)
        #expect(path.root?.kind == .global(symbol: "App.cache", module: "App"))
        #expect(path.nodes.map(\.type.name) == ["App.Store", "App.Item"] && path.nodes.first?.fieldName == "latest")
        #expect(path.roots?.map(\.instances) == [1])
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
