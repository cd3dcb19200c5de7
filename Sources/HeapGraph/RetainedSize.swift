import HarnessModel

/// The largest retainers of a snapshot: the dominator tree's blocks aggregated by their path of types, then the
/// chains that hold the most bytes.
///
/// Aggregation. Each reachable block belongs to the node (its immediate dominator's node, its type); a block of the
/// same type as its immediate dominator joins that one's node (a linked list is one node, not a million). A node's
/// retained bytes are those of its blocks not dominated by another of its blocks. So 3,000 closure contexts under one
/// array's storage are one node ×3,000, and the 3,000 documents they each dominate the node below it.
///
/// Chains. A node continues into its heaviest child when that child retains at least `continuation` of its bytes
/// (what the node holds is, nearly all of it, what the child holds): a chain is a node where no parent continues into
/// it, followed down while nodes continue. Each chain is one row, with the path from the tree's top to its last node
/// (the nodes above the chain say where it hangs), ranked by the retained bytes of its first node.
struct RetainedSize {
    let snapshot: HeapSnapshot
    let tree: DominatorTree
    let limits: HeapGraphLimits
    /// Per interned name: empty (its blocks are told apart by size).
    private let unnamed: [Bool]

    init(snapshot: HeapSnapshot, tree: DominatorTree, limits: HeapGraphLimits) {
        self.snapshot = snapshot
        self.tree = tree
        self.limits = limits
        unnamed = snapshot.names.map(\.isEmpty)
    }

    /// A chain goes on into a child that retains at least this share of the node's bytes.
    static let continuation = 0.9

    private struct Key: Hashable {
        var parent: Int32
        var name: UInt32
        var kind: HeapBlockKind
        /// The size of an unnamed block (unnamed blocks are told apart by size, as in the type census), else 0.
        var unnamedBytes: UInt64
    }

    /// The aggregated tree: per node its parent (-1 at the top), one block of it (the first reached), its
    /// blocks, own bytes and retained bytes.
    private struct Nodes {
        var parent: [Int32] = []
        var firstBlock: [UInt32] = []
        var count: [Int] = []
        var shallow: [UInt64] = []
        var retained: [UInt64] = []
        var stackBlock: [UInt32] = []
    }

    func retainers() -> HeapRetainers {
        let nodes = aggregate()
        let reachableBytes = tree.postorder.reduce(0) { $0 + Int(snapshot.sizes[Int($1)]) }
        var heaviest = [Int32](repeating: -1, count: nodes.parent.count)
        for node in nodes.parent.indices {
            let parent = Int(nodes.parent[node])
            guard parent >= 0 else { continue }
            let current = Int(heaviest[parent])
            if current < 0 || nodes.retained[node] > nodes.retained[current] { heaviest[parent] = Int32(node) }
        }
        func continues(_ parent: Int) -> Int? {
            let child = Int(heaviest[parent])
            guard child >= 0, Double(nodes.retained[child]) >= Self.continuation * Double(nodes.retained[parent])
            else { return nil }
            return child
        }
        let starts = nodes.parent.indices.filter { node in
            let parent = Int(nodes.parent[node])
            return parent < 0 || continues(parent) != node
        }
        // Most first; ties by the first block's address (the snapshot's order).
        let ranked = starts.sorted {
            nodes.retained[$0] != nodes.retained[$1]
                ? nodes.retained[$0] > nodes.retained[$1] : nodes.firstBlock[$0] < nodes.firstBlock[$1]
        }
        // A chain below the threshold holds too little of the heap to explain it; it is counted, not listed.
        let threshold = UInt64(Double(reachableBytes) * limits.minimumRetainerShare)
        let shown = ranked.prefix(limits.maximumRetainers).filter { nodes.retained[$0] >= max(threshold, 1) }
        let rows = shown.map { start in
            var last = start
            while let next = continues(last) { last = next }
            return row(start: start, last: last, nodes: nodes)
        }
        return HeapRetainers(rows: rows, omittedRows: ranked.count - rows.count, reachableBytes: reachableBytes)
    }

    /// Every reachable block into its node, dominators first (reverse postorder), then the stacks.
    private func aggregate() -> Nodes {
        var nodes = Nodes()
        var nodeOf = [Int32](repeating: -1, count: snapshot.blockCount)
        var index: [Key: Int32] = [:]
        for block in tree.postorder.reversed().lazy.map({ Int($0) }) {
            let dominator = tree.immediateDominator[block]
            let parent = dominator == DominatorTree.virtualRoot ? Int32(-1) : nodeOf[Int(dominator)]
            let key = key(of: block, parent: parent)
            if parent >= 0, sameType(block, Int(dominator)) {
                nodeOf[block] = parent
            } else if let node = index[key] {
                nodeOf[block] = node
                nodes.retained[Int(node)] += tree.retainedBytes[block]
            } else {
                let node = Int32(nodes.parent.count)
                index[key] = node
                nodeOf[block] = node
                nodes.parent.append(parent)
                nodes.firstBlock.append(UInt32(block))
                nodes.count.append(0)
                nodes.shallow.append(0)
                nodes.retained.append(tree.retainedBytes[block])
                nodes.stackBlock.append(HeapSnapshot.none)
            }
            let node = Int(nodeOf[block])
            nodes.count[node] += 1
            nodes.shallow[node] += snapshot.sizes[block]
        }
        for (block, _) in snapshot.stackIndices.entries {
            let node = Int(nodeOf[Int(block)])
            if node >= 0, nodes.stackBlock[node] == HeapSnapshot.none { nodes.stackBlock[node] = block }
        }
        return nodes
    }

    /// The same type as the census tells types apart: name and kind, and the size of an unnamed block (an empty name
    /// may be interned at any index).
    private func sameType(_ block: Int, _ other: Int) -> Bool {
        let name = snapshot.typeNames[block]
        return name == snapshot.typeNames[other] && snapshot.kinds[block] == snapshot.kinds[other]
            && (!unnamed[Int(name)] || snapshot.sizes[block] == snapshot.sizes[other])
    }

    private func key(of block: Int, parent: Int32) -> Key {
        let name = snapshot.typeNames[block]
        return Key(
            parent: parent, name: name, kind: snapshot.kinds[block],
            unnamedBytes: unnamed[Int(name)] ? snapshot.sizes[block] : 0)
    }

    private func row(start: Int, last: Int, nodes: Nodes) -> HeapRetainer {
        var chain = [last]
        while nodes.parent[chain[chain.count - 1]] >= 0 { chain.append(Int(nodes.parent[chain[chain.count - 1]])) }
        chain.reverse()
        let first = chain.firstIndex(of: start) ?? 0
        let total = chain.count
        let kept = limits.keptPathPositions(total)
        let top = Int(nodes.firstBlock[chain[0]])
        let root = snapshot.roots.first { Int($0.block) == top }.map {
            HeapPathRoot(kind: $0.kind, description: $0.description)
        }
        let stackBlock = chain.reversed().lazy.map { nodes.stackBlock[$0] }.first { $0 != HeapSnapshot.none }
        return HeapRetainer(
            root: root,
            nodes: kept.map { position in
                let node = chain[position]
                let block = Int(nodes.firstBlock[node])
                return HeapRetainerNode(
                    type: snapshot.typeName(ofBlock: block), fieldName: fieldName(holding: block),
                    count: nodes.count[node], shallowBytes: Int(nodes.shallow[node]),
                    retainedBytes: Int(nodes.retained[node]))
            },
            omittedNodes: total - kept.count, retainedBytes: Int(nodes.retained[start]),
            firstRetainingNode: kept.firstIndex(of: first) ?? 0,
            allocationStack: stackBlock.flatMap { snapshot.stack(ofBlock: Int($0)) })
    }

    /// The named field of `block`'s immediate dominator that references it, when the dominator does so directly.
    private func fieldName(holding block: Int) -> String? {
        let dominator = tree.immediateDominator[block]
        guard dominator != DominatorTree.virtualRoot, dominator != DominatorTree.unreached else { return nil }
        let row = Int(snapshot.edgeStart[Int(dominator)])..<Int(snapshot.edgeStart[Int(dominator) + 1])
        return row.lazy.filter { Int(self.snapshot.edgeTargets[$0]) == block }.compactMap {
            self.snapshot.fieldName(ofEdge: $0)
        }.first
    }
}
