import HarnessModel

/// The dominator tree of a snapshot's reachable blocks, and each block's retained bytes.
///
/// A virtual root stands above every root (globals, stacks, registers, thread-local storage): block `d` dominates
/// block `b` when every chain of strong or unowned references from the virtual root to `b` passes through `d`. What
/// `b` dominates is what freeing `b`'s last owner would free with it, so `b`'s retained bytes are its own plus those
/// of every block it dominates (Eclipse MAT's and Chrome DevTools' retained size). Blocks no root reaches are in no
/// tree (the leak groups account for them).
///
/// Computed with Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast Dominance Algorithm", 2001): blocks
/// numbered in the postorder of a depth-first walk from the virtual root, then each block's immediate dominator is the
/// nearest common ancestor of its predecessors' until nothing changes (two or three passes on a heap). Weak and
/// side-table-to-object references are never followed, as in `Reachability`.
struct DominatorTree {
    /// Reached blocks in the walk's postorder: a block's dominators all come after it, the virtual root last.
    let postorder: [UInt32]
    /// Per block: its immediate dominator (a block), `DominatorTree.virtualRoot`, or `unreached`.
    let immediateDominator: [UInt32]
    /// Per block: its bytes and those of every block it dominates (0 for an unreached block).
    let retainedBytes: [UInt64]

    /// The immediate dominator of a block held by roots alone (no one block is on every chain to it).
    static let virtualRoot = UInt32.max - 1
    static let unreached = UInt32.max

    init(_ snapshot: HeapSnapshot) {
        let blockCount = snapshot.blockCount
        let postorder = Self.postorder(snapshot)
        let count = postorder.count
        // Number: a block's position in the postorder; the virtual root is number `count`.
        var number = [UInt32](repeating: Self.unreached, count: blockCount)
        for (position, block) in postorder.enumerated() { number[Int(block)] = UInt32(truncatingIfNeeded: position) }
        let predecessors = Self.predecessors(snapshot, number: number, count: count)
        let dominators = Self.dominators(predecessors: predecessors, count: count)
        var immediate = [UInt32](repeating: Self.unreached, count: blockCount)
        var retained = [UInt64](repeating: 0, count: blockCount)
        for position in 0..<count {
            let block = Int(postorder[position])
            retained[block] += snapshot.sizes[block]
            let dominator = Int(dominators[position])
            guard dominator < count else {
                immediate[block] = Self.virtualRoot
                continue
            }
            // A dominator comes after the blocks it dominates: its sum is complete before it is added up.
            let parent = Int(postorder[dominator])
            immediate[block] = UInt32(truncatingIfNeeded: parent)
            retained[parent] += retained[block]
        }
        self.postorder = postorder
        immediateDominator = immediate
        retainedBytes = retained
    }

    /// The blocks the roots reach, in the postorder of a depth-first walk from the virtual root (roots in canonical
    /// order, each block's edges by offset). Iterative: a chain of a million blocks is a million deep.
    private static func postorder(_ snapshot: HeapSnapshot) -> [UInt32] {
        var visited = [Bool](repeating: false, count: snapshot.blockCount)
        var order: [UInt32] = []
        order.reserveCapacity(snapshot.blockCount)
        // Each entry: a block and the next of its edges to follow.
        var stack: [(block: UInt32, edge: UInt32)] = []
        snapshot.edgeStart.withUnsafeBufferPointer { start in
            snapshot.edgeTargets.withUnsafeBufferPointer { targets in
                snapshot.edgeKinds.withUnsafeBufferPointer { kinds in
                    for root in snapshot.roots where !visited[Int(root.block)] {
                        visited[Int(root.block)] = true
                        stack.append((root.block, start[Int(root.block)]))
                        while let top = stack.last {
                            let end = start[Int(top.block) + 1]
                            var edge = top.edge
                            var next: UInt32?
                            while edge < end, next == nil {
                                let target = targets[Int(edge)]
                                let kind = kinds[Int(edge)]
                                edge += 1
                                if (kind == .strong || kind == .unowned) && !visited[Int(target)] { next = target }
                            }
                            stack[stack.count - 1].edge = edge
                            if let next {
                                visited[Int(next)] = true
                                stack.append((next, start[Int(next)]))
                            } else {
                                order.append(top.block)
                                stack.removeLast()
                            }
                        }
                    }
                }
            }
        }
        return order
    }

    /// Each numbered block's predecessors by number (the virtual root, `count`, for a block a root points at), as
    /// compressed rows: the predecessors of `n` are `values[start[n]..<start[n + 1]]`.
    private static func predecessors(
        _ snapshot: HeapSnapshot, number: [UInt32], count: Int
    ) -> (start: [UInt32], values: [UInt32]) {
        var start = [UInt32](repeating: 0, count: count + 2)
        func eachEdge(_ body: (_ from: UInt32, _ to: UInt32) -> Void) {
            for root in snapshot.roots { body(UInt32(truncatingIfNeeded: count), number[Int(root.block)]) }
            for block in 0..<snapshot.blockCount where number[block] != unreached {
                for edge in Int(snapshot.edgeStart[block])..<Int(snapshot.edgeStart[block + 1]) {
                    let kind = snapshot.edgeKinds[edge]
                    guard kind == .strong || kind == .unowned else { continue }
                    body(number[block], number[Int(snapshot.edgeTargets[edge])])
                }
            }
        }
        eachEdge { _, to in start[Int(to) + 2] += 1 }
        for index in 2..<start.count { start[index] += start[index - 1] }
        var values = [UInt32](repeating: 0, count: Int(start[count + 1]))
        eachEdge { from, to in
            values[Int(start[Int(to) + 1])] = from
            start[Int(to) + 1] += 1
        }
        return (start, values)
    }

    /// Cooper, Harvey and Kennedy's fixed point, over numbers: per number, its immediate dominator's number (`count`:
    /// the virtual root).
    private static func dominators(predecessors: (start: [UInt32], values: [UInt32]), count: Int) -> [UInt32] {
        let undefined = UInt32.max
        var dominator = [UInt32](repeating: undefined, count: count + 1)
        dominator[count] = UInt32(truncatingIfNeeded: count)
        var changed = true
        while changed {
            changed = false
            // Reverse postorder: the virtual root's children first.
            for node in stride(from: count - 1, through: 0, by: -1) {
                var candidate = undefined
                for index in Int(predecessors.start[node])..<Int(predecessors.start[node + 1]) {
                    let predecessor = predecessors.values[index]
                    guard dominator[Int(predecessor)] != undefined else { continue }
                    candidate =
                        candidate == undefined
                        ? predecessor : intersect(candidate, predecessor, dominator)
                }
                if candidate != dominator[node] {
                    dominator[node] = candidate
                    changed = true
                }
            }
        }
        return dominator
    }

    /// The nearest common dominator of two numbered blocks: walk the lower number up until they meet.
    private static func intersect(_ first: UInt32, _ second: UInt32, _ dominator: [UInt32]) -> UInt32 {
        var (left, right) = (first, second)
        while left != right {
            while left < right { left = dominator[Int(left)] }
            while right < left { right = dominator[Int(right)] }
        }
        return left
    }
}
