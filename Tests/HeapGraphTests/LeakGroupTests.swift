import HarnessModel
import HeapGraph
import Testing

@Suite struct LeakGroupTests {
    /// A reachable object is seen as reachable (the analysis can see a live object) before leaks are asserted.
    @Test func aCycleOfThreeIsOneRootCycle() throws {
        var graph = GraphFixture()
        let store = graph.block("App.Store")
        graph.global("App.Store.shared", store)
        let a = graph.block("App.A", bytes: 32, stack: ["App.makeA() (A.swift:3)"])
        let b = graph.block("App.B", bytes: 64)
        let c = graph.block("App.C", bytes: 128)
        graph.edge(a, b, "b")
        graph.edge(b, c, "c")
        graph.edge(c, a, "a")
        let summary = try graph.analyse()
        #expect(summary.reachableBlocks == 1 && summary.reachableBytes == 48)
        #expect(summary.leakedBlocks == 3 && summary.leakedBytes == 224)
        #expect(summary.cycleCount == 1 && summary.rootCycleCount == 1 && summary.rootLeakCount == 0)
        let group = try #require(summary.groups.first)
        #expect(summary.groups.count == 1)
        #expect(group.kind == .rootCycle && group.blocks == 3 && group.rootBlocks == 3 && group.bytes == 224)
        #expect(group.rootType == .object("App.A"))
        #expect(group.allocationStack == ["App.makeA() (A.swift:3)"])
        #expect(group.types.map(\.type.name) == ["App.C", "App.B", "App.A"])
        let cycle = try #require(group.cycle)
        #expect(cycle.memberBlocks == 3 && cycle.memberBytes == 224)
        #expect(
            cycle.edges.map { "\($0.from.name).\($0.fieldName ?? "?") -> \($0.to.name)" } == [
                "App.A.b -> App.B", "App.B.c -> App.C", "App.C.a -> App.A",
            ])
    }

    @Test func aCycleKeptByARootLeakIsNestedInItsGroup() throws {
        var graph = GraphFixture()
        let root = graph.block("App.Screen", bytes: 100, stack: ["App.present() (Screen.swift:9)"])
        let a = graph.block("App.Subscription", bytes: 40)
        let b = graph.block("App.Handler", bytes: 60, stack: ["App.subscribe() (Screen.swift:20)"])
        graph.edge(root, a, "subscription")
        graph.edge(a, b, "handler")
        graph.edge(b, a, "subscription")
        let summary = try graph.analyse()
        #expect(summary.leakedBlocks == 3 && summary.leakedBytes == 200)
        #expect(summary.cycleCount == 1 && summary.rootLeakCount == 1 && summary.rootCycleCount == 0)
        let group = try #require(summary.groups.first)
        #expect(summary.groups.count == 1)
        #expect(group.kind == .rootLeak && group.rootBlocks == 1 && group.blocks == 3 && group.cycle == nil)
        #expect(group.rootType == .object("App.Screen"))
        #expect(group.allocationStack == ["App.present() (Screen.swift:9)"])
        let nested = try #require(group.nestedCycles.first)
        #expect(group.nestedCycles.count == 1 && nested.memberBlocks == 2 && nested.memberBytes == 100)
        // The round trip starts from the Swift object whose type name sorts first.
        #expect(nested.edges.map(\.fieldName) == ["subscription", "handler"])
        #expect(nested.edges.first?.from == .object("App.Handler"))
    }

    @Test func aWeakBackReferenceNeverRetains() throws {
        var graph = GraphFixture()
        let parent = graph.block("App.Parent")
        let child = graph.block("App.Child")
        let table = graph.block("", bytes: 32, kind: .sideTable)
        graph.global("App.root", parent)
        graph.edge(parent, child, "child")
        graph.edge(child, table, "parent", kind: .weak)
        graph.edge(table, parent, kind: .sideTableToObject, offset: 0)
        let summary = try graph.analyse()
        // The side table no strong word reaches is its object's, kept with it: every live block is reachable or leaked.
        #expect(summary.reachableBlocks == 3)
        #expect(summary.leakedBlocks == 0 && summary.groups.isEmpty && summary.cycleCount == 0)

        // Without the global, the child's weak reference keeps nothing: the parent is the root leak and its
        // side table (owned by it) and child are in its group, with no cycle.
        var orphan = GraphFixture()
        let lostParent = orphan.block("App.Parent")
        let lostChild = orphan.block("App.Child")
        let lostTable = orphan.block("", bytes: 32, kind: .sideTable)
        orphan.edge(lostParent, lostChild, "child")
        orphan.edge(lostChild, lostTable, "parent", kind: .weak)
        orphan.edge(lostTable, lostParent, kind: .sideTableToObject, offset: 0)
        let leaked = try orphan.analyse()
        #expect(leaked.leakedBlocks == 3 && leaked.leakedBytes == 128 && leaked.cycleCount == 0)
        #expect(leaked.groups.map(\.kind) == [.rootLeak])
        #expect(leaked.groups.first?.rootType == .object("App.Parent") && leaked.groups.first?.blocks == 3)
    }

    @Test func aSideTableOfAFreedObjectIsNotALeak() throws {
        var graph = GraphFixture()
        let holder = graph.block("App.Holder")
        let table = graph.block("", bytes: 32, kind: .sideTable)
        graph.global("App.holder", holder)
        graph.edge(holder, table, "weakTarget", kind: .weak)
        let summary = try graph.analyse()
        // The table waits for the last weak reference, which frees it: not a leak, counted with what is kept.
        #expect(summary.reachableBlocks == 2 && summary.leakedBlocks == 0)
    }

    @Test func anUnownedBackReferenceIsReachableAndMakesNoCycle() throws {
        var graph = GraphFixture()
        let parent = graph.block("App.Parent")
        let child = graph.block("App.Child")
        graph.global("App.root", parent)
        graph.edge(parent, child, "child")
        graph.edge(child, parent, "parent", kind: .unowned)
        let kept = try graph.analyse()
        #expect(kept.reachableBlocks == 2 && kept.leakedBlocks == 0)

        var orphan = GraphFixture()
        let lostParent = orphan.block("App.Parent")
        let lostChild = orphan.block("App.Child")
        orphan.edge(lostParent, lostChild, "child")
        orphan.edge(lostChild, lostParent, "parent", kind: .unowned)
        let leaked = try orphan.analyse()
        #expect(leaked.leakedBlocks == 2 && leaked.cycleCount == 0 && leaked.rootLeakCount == 1)
        #expect(leaked.groups.first?.rootType == .object("App.Parent"))
    }

    @Test func twoDisjointRootLeaksAreTwoGroupsLargestFirst() throws {
        var graph = GraphFixture()
        let small = graph.block("", bytes: 16, kind: .unknown)
        let large = graph.block("", bytes: 4096, kind: .unknown, stack: ["main (probe.c:12)"])
        let kept = graph.block("", bytes: 64, kind: .unknown)
        graph.stack("main", kept)
        _ = (small, large)
        let summary = try graph.analyse()
        #expect(summary.leakedBlocks == 2 && summary.leakedBytes == 4112)
        #expect(summary.rootLeakCount == 2 && summary.cycleCount == 0)
        #expect(summary.groups.map(\.bytes) == [4096, 16])
        #expect(summary.groups.map(\.rootType.unnamedBlockBytes) == [4096, 16])
        #expect(summary.groups.first?.allocationStack == ["main (probe.c:12)"])
    }

    @Test func aSelfLoopIsARootCycleOfOneBlock() throws {
        var graph = GraphFixture()
        let node = graph.block("App.Node", bytes: 32)
        graph.edge(node, node, "next")
        let summary = try graph.analyse()
        #expect(summary.leakedBlocks == 1 && summary.cycleCount == 1 && summary.rootCycleCount == 1)
        let group = try #require(summary.groups.first)
        #expect(group.kind == .rootCycle && group.rootBlocks == 1)
        #expect(
            group.cycle?.edges == [
                HeapCycleEdge(
                    from: .object("App.Node"), fieldName: "next", byteOffset: 16, kind: .strong, to: .object("App.Node")
                )
            ])
    }

    @Test func aLongRingNeedsNoRecursion() throws {
        var graph = GraphFixture()
        let count = 200_000
        graph.builder.reserve(blocks: count, edges: count)
        var previous = graph.block("App.Link", bytes: 16)
        let first = previous
        for _ in 1..<count {
            let next = graph.block("App.Link", bytes: 16)
            graph.edge(previous, next, "next")
            previous = next
        }
        graph.edge(previous, first, "next")
        let summary = try graph.analyse()
        #expect(summary.leakedBlocks == count && summary.cycleCount == 1)
        #expect(summary.groups.first?.cycle?.memberBlocks == count)
        #expect(summary.groups.first?.cycle?.edges.count == HeapGraphLimits().maximumCycleEdges)
        #expect(summary.groups.first?.cycle?.omittedEdges == count - HeapGraphLimits().maximumCycleEdges)
    }
}
