import HarnessModel

/// The leaked blocks as a graph of their own, numbered 0..<count in address order, with their strongly
/// connected components.
///
/// Its edges are the strong references between leaked blocks, plus one from each leaked object to its leaked
/// side table (the object owns it, whether or not the capture saw the refcount word's pointer): so a side
/// table is never a root and always lands in its object's group. `unowned` references keep nothing alive:
/// they make no cycle and do not stop their target from being a root (a parent whose child holds it
/// `unowned` is the root leak, the child inside its group), though they do make their target reachable.
struct LeakedGraph {
    /// Snapshot block of each leaked block, ascending.
    let blocks: [UInt32]
    /// Rows: the edges of leaked block `v` are `start[v]..<start[v + 1]`.
    let start: [UInt32]
    let targets: [UInt32]
    /// The snapshot edge of each edge, `ownerEdge` for an object -> side table edge the capture did not list.
    let origins: [UInt32]
    /// Component of each leaked block; components are numbered in the order Tarjan's algorithm closes them.
    private(set) var component: [UInt32] = []
    private(set) var componentCount = 0

    static let ownerEdge = UInt32.max
    static let absent = UInt32.max

    var count: Int { blocks.count }

    init(_ snapshot: HeapSnapshot, leaked: [Bool]) {
        var blocks: [UInt32] = []
        for block in 0..<snapshot.blockCount where leaked[block] { blocks.append(UInt32(truncatingIfNeeded: block)) }
        let local = LocalIndex(blocks: blocks, blockCount: snapshot.blockCount)
        // Side tables owned by a leaked object: object (local) -> its side tables (local).
        var owned: [UInt32: [UInt32]] = [:]
        for (index, block) in blocks.enumerated() where snapshot.kinds[Int(block)] == .sideTable {
            if let object = Reachability.object(ofSideTable: Int(block), in: snapshot), local[object] != Self.absent {
                owned[local[object], default: []].append(UInt32(truncatingIfNeeded: index))
            }
        }
        var start: [UInt32] = [0]
        var targets: [UInt32] = []
        var origins: [UInt32] = []
        start.reserveCapacity(blocks.count + 1)
        for (index, block) in blocks.enumerated() {
            for edge in Int(snapshot.edgeStart[Int(block)])..<Int(snapshot.edgeStart[Int(block) + 1]) {
                let kind = snapshot.edgeKinds[edge]
                let target = local[Int(snapshot.edgeTargets[edge])]
                guard kind == .strong, target != Self.absent else { continue }
                targets.append(target)
                origins.append(UInt32(truncatingIfNeeded: edge))
            }
            for table in owned[UInt32(truncatingIfNeeded: index)] ?? [] {
                targets.append(table)
                origins.append(Self.ownerEdge)
            }
            start.append(UInt32(truncatingIfNeeded: targets.count))
        }
        self.blocks = blocks
        self.start = start
        self.targets = targets
        self.origins = origins
        findComponents()
    }

    func edges(of vertex: Int) -> Range<Int> { Int(start[vertex])..<Int(start[vertex + 1]) }

    /// Tarjan's strongly connected components without recursion (an explicit call stack: a million blocks
    /// in a chain must not overflow the thread's stack).
    private mutating func findComponents() {
        var component = [UInt32](repeating: Self.absent, count: blocks.count)
        let count = start.withUnsafeBufferPointer { start in
            targets.withUnsafeBufferPointer { targets in
                component.withUnsafeMutableBufferPointer { component in
                    Self.tarjan(start: start, targets: targets, component: component)
                }
            }
        }
        self.component = component
        componentCount = count
    }

    /// Fills `component` (all `absent` on entry) and returns the number of components.
    ///
    /// On unsafe buffers, and with one random access per edge: a vertex's index and low link sit side by side,
    /// and a vertex closed into a component gets the index `closed`, so "visited and still on Tarjan's stack"
    /// is `index[target] < closed` with no on-stack flags or component look-up (a million-block heap's
    /// analysis spent half its time here, waiting on cache misses, with arrays).
    private static func tarjan(
        start: UnsafeBufferPointer<UInt32>, targets: UnsafeBufferPointer<UInt32>,
        component: UnsafeMutableBufferPointer<UInt32>
    ) -> Int {
        let count = component.count
        let closed = absent - 1
        // (index, low) pairs; then Tarjan's stack, the call stack's vertices and next edges, each at most `count`.
        let scratch = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: 5 * count)
        defer { scratch.deallocate() }
        guard count > 0, let links = scratch.baseAddress else { return 0 }
        scratch.initialize(repeating: absent)
        let (stack, callVertex, callNext) = (links + 2 * count, links + 3 * count, links + 4 * count)
        var (stackTop, callTop) = (0, 0)
        var (counter, components): (UInt32, UInt32) = (0, 0)
        func visit(_ vertex: Int) {
            (links[2 * vertex], links[2 * vertex + 1]) = (counter, counter)
            counter += 1
            stack[stackTop] = UInt32(truncatingIfNeeded: vertex)
            stackTop += 1
            (callVertex[callTop], callNext[callTop]) = (UInt32(truncatingIfNeeded: vertex), start[vertex])
            callTop += 1
        }
        for root in 0..<count where links[2 * root] == absent {
            visit(root)
            while callTop > 0 {
                let vertex = Int(callVertex[callTop - 1])
                let next = Int(callNext[callTop - 1])
                if next < Int(start[vertex + 1]) {
                    callNext[callTop - 1] += 1
                    let target = Int(targets[next])
                    let targetIndex = links[2 * target]
                    if targetIndex == absent {
                        visit(target)
                    } else if targetIndex < closed {
                        links[2 * vertex + 1] = min(links[2 * vertex + 1], targetIndex)
                    }
                    continue
                }
                callTop -= 1
                let vertexLow = links[2 * vertex + 1]
                if callTop > 0 {
                    let parent = Int(callVertex[callTop - 1])
                    links[2 * parent + 1] = min(links[2 * parent + 1], vertexLow)
                }
                guard vertexLow == links[2 * vertex] else { continue }
                repeat {
                    stackTop -= 1
                    let member = Int(stack[stackTop])
                    component[member] = components
                    links[2 * member] = closed
                } while Int(stack[stackTop]) != vertex
                components += 1
            }
        }
        return Int(components)
    }
}

/// The leaked-graph index of a snapshot block (`LeakedGraph.absent` when it did not leak): a column of one entry a
/// block when many leaked, else a binary search over the leaked blocks (a few thousand leaked blocks in a heap of a
/// million must not cost 4 bytes a live block at the analysis's peak).
private struct LocalIndex {
    private let blocks: [UInt32]
    /// Empty when the lookups search `blocks`.
    private let dense: [UInt32]

    init(blocks: [UInt32], blockCount: Int) {
        self.blocks = blocks
        guard blocks.count > blockCount / 16 else {
            dense = []
            return
        }
        var dense = [UInt32](repeating: LeakedGraph.absent, count: blockCount)
        for (index, block) in blocks.enumerated() { dense[Int(block)] = UInt32(truncatingIfNeeded: index) }
        self.dense = dense
    }

    subscript(block: Int) -> UInt32 {
        if !dense.isEmpty { return dense[block] }
        var low = 0
        var high = blocks.count
        while low < high {
            let middle = (low + high) / 2
            if Int(blocks[middle]) < block { low = middle + 1 } else { high = middle }
        }
        return low < blocks.count && Int(blocks[low]) == block ? UInt32(truncatingIfNeeded: low) : LeakedGraph.absent
    }
}
