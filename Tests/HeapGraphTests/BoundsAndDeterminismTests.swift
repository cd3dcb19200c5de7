import HarnessModel
import HeapGraph
import Testing
import WorkloadKit

@Suite struct BoundsAndDeterminismTests {
    @Test func summariesKeepTheirBoundsAndCountTheRest() throws {
        var graph = GraphFixture()
        for index in 0..<60 { graph.block("App.T\(index)", bytes: 16 + index) }
        let chain = (0..<40).map { graph.block("App.Hop\($0)") }
        graph.global("App.head", chain[0])
        for (from, to) in zip(chain, chain.dropFirst()) { graph.edge(from, to, "next") }
        let targets = (0..<25).map { HeapPathTarget.type(named: "Hop\(39 - $0)", reason: .requestedType) }
        let summary = try graph.analyse(targets)
        #expect(summary.groups.count == 50 && summary.omittedGroups == 10)
        #expect(summary.groups.map(\.blocks).reduce(0, +) + summary.omittedGroupBlocks == summary.leakedBlocks)
        #expect(summary.groups.map(\.bytes).reduce(0, +) + summary.omittedGroupBytes == summary.leakedBytes)
        // The omitted groups are the smallest: T0...T9.
        #expect(summary.omittedGroupBytes == (16..<26).reduce(0, +))
        #expect(summary.types.count == 100 && summary.omittedTypes == 0)
        #expect(summary.paths.count == 20 && summary.omittedPaths == 5)
        let longest = try #require(summary.paths.first)
        #expect(longest.nodes.count == 24 && longest.omittedNodes == 16)
        #expect(longest.nodes.first?.type.name == "App.Hop0" && longest.nodes.last?.type.name == "App.Hop39")
        let many = try graph.analyse(
            limits: {
                var l = HeapGraphLimits()
                l.maximumTypes = 7
                return l
            }())
        #expect(many.types.count == 7 && many.omittedTypes == 93)
        #expect(many.types.map(\.bytes).reduce(0, +) + many.omittedTypeBytes == many.liveBytes)
    }

    /// A random graph checked against a plain set-based walk, with groups that sum to the leaked totals.
    @Test(arguments: [1, 2, 3])
    func randomGraphsAgreeWithANaiveWalk(seed: UInt64) throws {
        let (graph, edges, roots) = Self.randomGraph(seed: seed, blocks: 2_000, edges: 3_000)
        let summary = try graph.analyse()
        var reached = Set(roots)
        var queue = roots
        while let block = queue.popLast() {
            for (from, to, kind) in edges where from == block && kind != .weak && !reached.contains(to) {
                reached.insert(to)
                queue.append(to)
            }
        }
        #expect(summary.reachableBlocks == reached.count)
        #expect(summary.leakedBlocks == 2_000 - reached.count)
        #expect(summary.leakedBlocks > 0 && summary.reachableBlocks > 0)
        #expect(summary.groups.map(\.blocks).reduce(0, +) + summary.omittedGroupBlocks == summary.leakedBlocks)
        #expect(summary.groups.map(\.bytes).reduce(0, +) + summary.omittedGroupBytes == summary.leakedBytes)
        #expect(
            summary.groups.map(\.count).reduce(0, +) + summary.omittedGroups
                == summary.rootCycleCount + summary.rootLeakCount)
        #expect(summary.reachableBytes + summary.leakedBytes == summary.liveBytes)
        let components = Self.naiveComponents(leaked: Set(0..<2_000).subtracting(reached.map(Int.init)), edges: edges)
        #expect(summary.cycleCount == components.cycles && summary.cycleCount > 0)
        #expect(summary.rootCycleCount == components.rootCycles)
        #expect(summary.rootLeakCount == components.rootLeaks)
    }

    /// Strongly connected components of the strong edges between leaked blocks, by mutual reachability.
    static func naiveComponents(
        leaked: Set<Int>, edges: [(UInt32, UInt32, HeapEdgeKind)]
    ) -> (cycles: Int, rootCycles: Int, rootLeaks: Int) {
        var next: [Int: [Int]] = [:]
        for (from, to, kind) in edges where kind == .strong && leaked.contains(Int(from)) && leaked.contains(Int(to)) {
            next[Int(from), default: []].append(Int(to))
        }
        var reach: [Int: Set<Int>] = [:]
        for start in leaked {
            var seen: Set<Int> = [start]
            var queue = [start]
            while let vertex = queue.popLast() {
                for target in next[vertex] ?? [] where seen.insert(target).inserted { queue.append(target) }
            }
            reach[start] = seen
        }
        var componentOf: [Int: Int] = [:]
        var members: [[Int]] = []
        for vertex in leaked.sorted() where componentOf[vertex] == nil {
            let component = leaked.filter { reach[vertex]?.contains($0) == true && reach[$0]?.contains(vertex) == true }
            for member in component { componentOf[member] = members.count }
            members.append(Array(component))
        }
        var referenced = Set<Int>()
        for (from, targets) in next {
            for to in targets where componentOf[from] != componentOf[to] { referenced.insert(componentOf[to] ?? -1) }
        }
        let isCycle = members.indices.map { index in
            members[index].count > 1 || members[index].contains { next[$0]?.contains($0) == true }
        }
        let roots = members.indices.filter { !referenced.contains($0) }
        return (
            isCycle.filter { $0 }.count, roots.filter { isCycle[$0] }.count, roots.filter { !isCycle[$0] }.count
        )
    }

    @Test func theSameHeapInAnyOrderGivesTheSameSummary() throws {
        let (graph, _, _) = Self.randomGraph(seed: 7, blocks: 3_000, edges: 5_000)
        let snapshot = try graph.snapshot()
        var generator = SeededRandom(seed: 99)
        var shuffled = HeapSnapshotBuilder(label: snapshot.label)
        let order = (0..<snapshot.blockCount).shuffled(using: &generator)
        var newIndex = [UInt32](repeating: 0, count: order.count)
        for old in order {
            newIndex[old] = shuffled.addBlock(
                address: snapshot.addresses[old], sizeBytes: Int(snapshot.sizes[old]), kind: snapshot.kinds[old],
                typeName: snapshot.names[Int(snapshot.typeNames[old])], stack: snapshot.stack(ofBlock: old))
        }
        var edges: [(UInt32, UInt32, Int, HeapEdgeKind, String?)] = []
        for block in 0..<snapshot.blockCount {
            for edge in Int(snapshot.edgeStart[block])..<Int(snapshot.edgeStart[block + 1]) {
                edges.append(
                    (
                        newIndex[block], newIndex[Int(snapshot.edgeTargets[edge])], Int(snapshot.edgeByteOffsets[edge]),
                        snapshot.edgeKinds[edge], snapshot.fieldName(ofEdge: edge)
                    ))
            }
        }
        for edge in edges.shuffled(using: &generator) {
            shuffled.addEdge(from: edge.0, to: edge.1, byteOffset: edge.2, kind: edge.3, fieldName: edge.4)
        }
        for root in snapshot.roots.shuffled(using: &generator) {
            shuffled.addRoot(
                root.kind, description: root.description, block: newIndex[Int(root.block)],
                slotAddress: root.slotAddress)
        }
        let targets: [HeapPathTarget] = (0..<8).map { .type(named: "T\($0)", reason: .requestedType) }
        let options = HeapAnalysisOptions(targets: targets)
        let first = HeapAnalysis.analyse(snapshot, options: options).summary
        let second = HeapAnalysis.analyse(try shuffled.build(), options: options).summary
        #expect(first == second)
        #expect(first == HeapAnalysis.analyse(snapshot, options: options).summary)
        #expect(!first.groups.isEmpty && first.paths.contains { $0.root != nil })
    }

    @Test func theBuilderRejectsWhatCannotBeAHeap() throws {
        var duplicate = HeapSnapshotBuilder(label: "x")
        duplicate.addBlock(address: 0x20, sizeBytes: 8, kind: .unknown)
        duplicate.addBlock(address: 0x10, sizeBytes: 8, kind: .unknown)
        duplicate.addBlock(address: 0x20, sizeBytes: 8, kind: .unknown)
        #expect(throws: HeapGraphError.duplicateAddress(0x20)) { try duplicate.build() }
        var dangling = HeapSnapshotBuilder(label: "x")
        dangling.addBlock(address: 0x10, sizeBytes: 8, kind: .unknown)
        dangling.addEdge(from: 0, to: 3)
        #expect(throws: HeapGraphError.indexOutOfRange(column: "edge to", item: 0, index: 3, count: 1)) {
            try dangling.build()
        }
        #expect(HeapGraphError.duplicateAddress(0x20).description.contains("0x20"))
    }

    /// The harness's blocks leave the graph and hold what they reference strongly (or unowned) by a root of their own;
    /// their weak references keep nothing, and a block only they reach through those is leaked.
    @Test func blocksSetAsideHoldWhatTheyReferenceStrongly() throws {
        var builder = HeapSnapshotBuilder(label: "x")
        let user = builder.addBlock(address: 0x10, sizeBytes: 16, kind: .swiftObject, typeName: "App.Kept")
        let harness = builder.addBlock(address: 0x20, sizeBytes: 16, kind: .swiftObject, typeName: "Harness.Own")
        let weakly = builder.addBlock(address: 0x30, sizeBytes: 16, kind: .swiftObject, typeName: "App.Lost")
        let owned = builder.addBlock(address: 0x40, sizeBytes: 16, kind: .swiftObject, typeName: "App.Unowned")
        builder.addEdge(from: harness, to: user, byteOffset: 16)
        builder.addEdge(from: harness, to: weakly, byteOffset: 24, kind: .weak)
        builder.addEdge(from: harness, to: owned, byteOffset: 32, kind: .unowned)
        builder.addEdge(from: user, to: harness, byteOffset: 16)
        builder.addRoot(.other, description: "a global", block: harness)
        builder.setAside([harness], heldBy: "the harness")
        let snapshot = try builder.build()
        #expect(snapshot.blockCount == 3 && snapshot.edgeCount == 0)
        #expect(snapshot.roots.map(\.description) == ["the harness", "the harness"])
        let held = Set(snapshot.roots.map { snapshot.typeName(ofBlock: Int($0.block)).name })
        #expect(held == ["App.Kept", "App.Unowned"])
        let summary = HeapAnalysis.analyse(snapshot).summary
        #expect(summary.leakedBlocks == 1 && summary.groups.first?.types.map(\.type.name) == ["App.Lost"])
    }

    /// Blocks of 8 types with random sizes, edges mostly strong (some weak, some unowned), a few rings, 20 roots.
    static func randomGraph(
        seed: UInt64, blocks: Int, edges: Int
    ) -> (GraphFixture, [(UInt32, UInt32, HeapEdgeKind)], [UInt32]) {
        var generator = SeededRandom(seed: seed)
        var graph = GraphFixture()
        let ids = (0..<blocks).map { _ in
            graph.block(
                "App.T\(generator.below(8))", bytes: 16 * (1 + generator.below(8)),
                stack: generator.below(3) == 0 ? ["f\(generator.below(4)) (F.swift:1)"] : nil)
        }
        var list: [(UInt32, UInt32, HeapEdgeKind)] = []
        for _ in 0..<edges {
            let kind: HeapEdgeKind = [.strong, .strong, .strong, .strong, .weak, .unowned][generator.below(6)]
            list.append((ids[generator.below(blocks)], ids[generator.below(blocks)], kind))
        }
        for ring in 0..<10 {
            let members = (0..<(2 + ring)).map { _ in ids[generator.below(blocks)] }
            for (from, to) in zip(members, members.dropFirst() + [members[0]]) { list.append((from, to, .strong)) }
        }
        for (offset, edge) in list.enumerated() {
            graph.edge(edge.0, edge.1, "f\(offset % 5)", kind: edge.2, offset: 8 * (offset % 7))
        }
        let roots = (0..<20).map { _ in ids[generator.below(blocks)] }
        for (index, root) in roots.enumerated() { graph.global("App.g\(index)", root) }
        return (graph, list, roots)
    }
}

@Suite struct SnapshotBuilderTests {
    /// A reader's bulk path: its own tables, blocks out of address order, a long row of edges in any order.
    @Test func aBulkSnapshotIsPutInCanonicalOrder() throws {
        var builder = HeapSnapshotBuilder(
            label: "bulk", timeNanoseconds: 42, names: ["", "App.Array", "element"], stacks: [["main (m.swift:1)"]])
        var generator = SeededRandom(seed: 5)
        let addresses = (0..<201).map { UInt64(0x1000 + $0 * 0x40) }.shuffled(using: &generator)
        for address in addresses {
            builder.addBlock(
                address: address, sizeBytes: 64, kind: address == 0x1000 ? .arrayStorage : .unknown,
                typeNameIndex: address == 0x1000 ? 1 : 0, stackIndex: address == 0x1000 ? 0 : HeapSnapshot.none)
        }
        let storage = UInt32(try #require(addresses.firstIndex(of: 0x1000)))
        for target in addresses.indices.shuffled(using: &generator) where target != Int(storage) {
            let element = UInt32(target)
            builder.addEdge(
                from: storage, to: element, byteOffset: UInt32(32 + 8 * ((Int(addresses[target]) - 0x1040) / 0x40)),
                kind: .strong, fieldNameIndex: 2)
        }
        builder.addRoot(.other, description: "test", block: storage)
        let snapshot = try builder.build()
        #expect(snapshot.label == "bulk" && snapshot.timeNanoseconds == 42)
        #expect(snapshot.addresses == ContiguousArray((0..<201).map { UInt64(0x1000 + $0 * 0x40) }))
        #expect(snapshot.kinds[0] == .arrayStorage && snapshot.stack(ofBlock: 0) == ["main (m.swift:1)"])
        #expect(snapshot.edgeStart[1] == 200 && snapshot.edgeStart.last == 200)
        let offsets: [UInt32] = (0..<200).map { (index: Int) -> UInt32 in UInt32(32 + 8 * index) }
        #expect(Array(snapshot.edgeByteOffsets) == offsets)
        #expect(Array(snapshot.edgeTargets) == (1...200).map { UInt32($0) })
        #expect(snapshot.fieldName(ofEdge: 0) == "element" && snapshot.source(ofEdge: 199) == 0)
        #expect(snapshot.block(at: 0x1040) == 1 && snapshot.block(at: 0x1041) == nil)
        let summary = HeapAnalysis.analyse(snapshot).summary
        #expect(summary.reachableBlocks == 201 && summary.leakedBlocks == 0)
    }
}
