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
        var local = [UInt32](repeating: Self.absent, count: snapshot.blockCount)
        for block in 0..<snapshot.blockCount where leaked[block] {
            local[block] = UInt32(truncatingIfNeeded: blocks.count)
            blocks.append(UInt32(truncatingIfNeeded: block))
        }
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
    /// in a chain must not overflow the thread's stack). A visited vertex not yet in a component is on
    /// Tarjan's stack, so no separate on-stack flags are kept.
    private mutating func findComponents() {
        let count = blocks.count
        var index = [UInt32](repeating: Self.absent, count: count)
        var low = [UInt32](repeating: 0, count: count)
        var component = [UInt32](repeating: Self.absent, count: count)
        var stack: [UInt32] = []
        var calls: [(vertex: Int, next: Int)] = []
        var counter: UInt32 = 0
        var components: UInt32 = 0
        for root in 0..<count where index[root] == Self.absent {
            index[root] = counter
            low[root] = counter
            counter += 1
            stack.append(UInt32(truncatingIfNeeded: root))
            calls.append((root, Int(start[root])))
            while let call = calls.last {
                let (vertex, next) = (call.vertex, call.next)
                if next < Int(start[vertex + 1]) {
                    calls[calls.count - 1].next = next + 1
                    let target = Int(targets[next])
                    if index[target] == Self.absent {
                        index[target] = counter
                        low[target] = counter
                        counter += 1
                        stack.append(UInt32(truncatingIfNeeded: target))
                        calls.append((target, Int(start[target])))
                    } else if component[target] == Self.absent {
                        low[vertex] = min(low[vertex], index[target])
                    }
                    continue
                }
                calls.removeLast()
                if let parent = calls.last { low[parent.vertex] = min(low[parent.vertex], low[vertex]) }
                guard low[vertex] == index[vertex] else { continue }
                while let member = stack.popLast() {
                    component[Int(member)] = components
                    if Int(member) == vertex { break }
                }
                components += 1
            }
        }
        self.component = component
        componentCount = Int(components)
    }
}
