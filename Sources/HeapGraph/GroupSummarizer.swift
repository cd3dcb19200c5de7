import HarnessModel

/// Turns a `LeakGrouping` into the bounded `HeapLeakGroup` values of a capture summary: the groups of one
/// signature (`LeakSignature`) are one value with their count, drawn from the first of them.
struct GroupSummarizer {
    let snapshot: HeapSnapshot
    let grouping: LeakGrouping
    let limits: HeapGraphLimits
    /// For `LeakGrouping.shortestCycle`: one entry per leaked block, `absent` between calls.
    private var scratch: [UInt32]

    init(snapshot: HeapSnapshot, grouping: LeakGrouping, limits: HeapGraphLimits) {
        self.snapshot = snapshot
        self.grouping = grouping
        self.limits = limits
        scratch = [UInt32](repeating: LeakedGraph.absent, count: grouping.graph.count)
    }

    /// Fills the cycle counts, the largest signatures' groups (one row each) and the omitted groups' sums.
    mutating func fill(_ summary: inout HeapCaptureSummary) {
        let graph = grouping.graph
        let cycles = (0..<graph.componentCount).filter { grouping.isCycle($0) }
        summary.cycleCount = cycles.count
        summary.rootCycleCount = grouping.rootComponents.filter { grouping.isCycle(Int($0)) }.count
        summary.rootLeakCount = grouping.groupCount - summary.rootCycleCount
        let rows = Self.rows(
            signatures: LeakSignature(snapshot: snapshot, grouping: grouping).signatures(),
            bytes: (0..<grouping.groupCount).map { self.bytes(of: grouping.members(ofGroup: $0)) },
            blocks: (0..<grouping.groupCount).map { grouping.members(ofGroup: $0).count })
        let shown = Array(rows.prefix(limits.maximumGroups))
        var nested: [Int: [Int]] = [:]
        let shownSet = Set(shown.map { $0.groups[0] })
        for component in cycles where grouping.referencedFromOutside[component] {
            let group = Int(grouping.groupOf[Int(grouping.members(ofComponent: component).first ?? 0)])
            if shownSet.contains(group) { nested[group, default: []].append(component) }
        }
        summary.groups = shown.map { group(of: $0, nested: nested[$0.groups[0]] ?? []) }
        for row in rows.dropFirst(shown.count) {
            summary.omittedGroups += row.groups.count
            summary.omittedGroupBlocks += row.blocks
            summary.omittedGroupBytes += row.bytes
        }
    }

    /// The groups of one signature: in group order (the first is the one drawn), with their sums.
    struct Row {
        var signature: String
        var groups: [Int]
        var blocks: Int
        var bytes: Int
    }

    /// The groups by signature, largest first; ties by group count, then by the first group (the walk's order).
    static func rows(signatures: [String], bytes: [Int], blocks: [Int]) -> [Row] {
        var rows: [Row] = []
        var index: [String: Int] = [:]
        for (group, signature) in signatures.enumerated() {
            if let row = index[signature] {
                rows[row].groups.append(group)
                rows[row].blocks += blocks[group]
                rows[row].bytes += bytes[group]
            } else {
                index[signature] = rows.count
                rows.append(Row(signature: signature, groups: [group], blocks: blocks[group], bytes: bytes[group]))
            }
        }
        return rows.sorted { lhs, rhs in
            if lhs.bytes != rhs.bytes { return lhs.bytes > rhs.bytes }
            if lhs.groups.count != rhs.groups.count { return lhs.groups.count > rhs.groups.count }
            return lhs.groups[0] < rhs.groups[0]
        }
    }

    private func bytes(of vertices: some Sequence<UInt32>) -> Int {
        vertices.reduce(0) { $0 + Int(snapshot.sizes[Int(grouping.graph.blocks[Int($1)])]) }
    }

    private func type(of vertex: Int) -> HeapTypeName {
        snapshot.typeName(ofBlock: Int(grouping.graph.blocks[vertex]))
    }

    private mutating func group(of row: Row, nested: [Int]) -> HeapLeakGroup {
        let index = row.groups[0]
        let rootComponent = Int(grouping.rootComponents[index])
        let isCycle = grouping.isCycle(rootComponent)
        let rootMembers = grouping.members(ofComponent: rootComponent)
        let start = isCycle ? cycleStart(rootComponent) : Int(rootMembers.first ?? 0)
        let members = grouping.members(ofGroup: index)
        let blocks = grouping.graph.blocks
        let tallies = TypeCounter(
            snapshot, blocks: row.groups.flatMap { grouping.members(ofGroup: $0).map { Int(blocks[Int($0)]) } }
        )
        .tallies(snapshot)
        let sortedNested = nested.map { (component: $0, bytes: self.bytes(of: grouping.members(ofComponent: $0))) }
            .sorted { $0.bytes != $1.bytes ? $0.bytes > $1.bytes : $0.component < $1.component }
            .prefix(limits.maximumNestedCycles)
        return HeapLeakGroup(
            kind: isCycle ? .rootCycle : .rootLeak, signature: row.signature, count: row.groups.count,
            blocks: row.blocks, bytes: row.bytes, rootBlocks: rootMembers.count, rootType: type(of: start),
            types: Array(tallies.prefix(limits.maximumTypesPerGroup)),
            omittedTypes: max(tallies.count - limits.maximumTypesPerGroup, 0),
            allocationStack: stack(preferring: start, then: members),
            cycle: isCycle ? cycle(rootComponent) : nil,
            nestedCycles: sortedNested.map { cycle($0.component) },
            omittedNestedCycles: nested.count - sortedNested.count)
    }

    /// The member a cycle is drawn from: a Swift object before anything else, then by type name, then address.
    private func cycleStart(_ component: Int) -> Int {
        let members = grouping.members(ofComponent: component)
        func key(_ vertex: UInt32) -> (Int, String) {
            let block = Int(grouping.graph.blocks[Int(vertex)])
            return (snapshot.kinds[block] == .swiftObject ? 0 : 1, snapshot.names[Int(snapshot.typeNames[block])])
        }
        // Members are ascending, so the first of equal keys has the lowest address.
        var best = members.first ?? 0
        var bestKey = key(best)
        for member in members.dropFirst() {
            let candidate = key(member)
            if candidate < bestKey { (best, bestKey) = (member, candidate) }
        }
        return Int(best)
    }

    private mutating func cycle(_ component: Int) -> HeapCycle {
        let members = grouping.members(ofComponent: component)
        let path = grouping.shortestCycle(through: cycleStart(component), scratch: &scratch)
        let edges = path.prefix(limits.maximumCycleEdges).map(cycleEdge)
        return HeapCycle(
            memberBlocks: members.count, memberBytes: bytes(of: members), edges: edges,
            omittedEdges: path.count - edges.count)
    }

    private func cycleEdge(_ edge: Int) -> HeapCycleEdge {
        let graph = grouping.graph
        let from = type(of: grouping.source(ofEdge: edge))
        let to = type(of: Int(graph.targets[edge]))
        let origin = graph.origins[edge]
        guard origin != LeakedGraph.ownerEdge else {
            // An object's refcount word (its second word, offset 8) holds its side table's address.
            return HeapCycleEdge(from: from, fieldName: nil, byteOffset: 8, kind: .strong, to: to)
        }
        return HeapCycleEdge(
            from: from, fieldName: snapshot.fieldName(ofEdge: Int(origin)),
            byteOffset: Int(snapshot.edgeByteOffsets[Int(origin)]), kind: snapshot.edgeKinds[Int(origin)], to: to)
    }

    /// The allocation stack of `preferred`, or of the first member (in walk order) that has one.
    private func stack(preferring preferred: Int, then members: ArraySlice<UInt32>) -> [String]? {
        if let stack = snapshot.stack(ofBlock: Int(grouping.graph.blocks[preferred])) { return stack }
        for member in members {
            if let stack = snapshot.stack(ofBlock: Int(grouping.graph.blocks[Int(member)])) { return stack }
        }
        return nil
    }
}
