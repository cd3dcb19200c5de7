import HarnessModel

/// What the roots reach: one multi-source breadth-first walk over strong and unowned edges, with the
/// edge (or root) each block was first reached by, so every shortest retaining path can be read back.
struct Reachability {
    /// Per block: `unreached`; an edge index below `edgeCount`; or `edgeCount + r` for root `r`.
    var via: [UInt32]
    /// Reached blocks in the order the walk reached them (nearest first).
    var order: [UInt32]
    /// Per block: no root reaches it and it is not a side table whose object is reached or freed.
    var leaked: [Bool]
    let edgeCount: Int

    static let unreached = UInt32.max

    /// Walks `snapshot` from its roots in canonical order (globals first); edges in row order (by offset).
    /// `weak` and `sideTableToObject` edges are never followed: they do not keep anything alive.
    init(_ snapshot: HeapSnapshot) {
        let blockCount = snapshot.blockCount
        edgeCount = snapshot.edgeCount
        var via = [UInt32](repeating: Self.unreached, count: blockCount)
        var order: [UInt32] = []
        order.reserveCapacity(blockCount)
        for (rootIndex, root) in snapshot.roots.enumerated() where via[Int(root.block)] == Self.unreached {
            via[Int(root.block)] = UInt32(truncatingIfNeeded: edgeCount + rootIndex)
            order.append(root.block)
        }
        snapshot.edgeStart.withUnsafeBufferPointer { start in
            snapshot.edgeTargets.withUnsafeBufferPointer { targets in
                snapshot.edgeKinds.withUnsafeBufferPointer { kinds in
                    var head = 0
                    while head < order.count {
                        let block = Int(order[head])
                        head += 1
                        for edge in Int(start[block])..<Int(start[block + 1]) {
                            let kind = kinds[edge]
                            guard kind == .strong || kind == .unowned else { continue }
                            let target = Int(targets[edge])
                            if via[target] == Self.unreached {
                                via[target] = UInt32(truncatingIfNeeded: edge)
                                order.append(UInt32(truncatingIfNeeded: target))
                            }
                        }
                    }
                }
            }
        }
        self.via = via
        self.order = order
        leaked = Self.leakedBlocks(snapshot, via: via)
    }

    /// Unreached blocks, except side tables whose object is reached or no longer live: a side table belongs
    /// to its object (it is leaked with a leaked object) and outlives a freed one only while weak references
    /// to it remain, which the runtime then frees with the last of them.
    private static func leakedBlocks(_ snapshot: HeapSnapshot, via: [UInt32]) -> [Bool] {
        var leaked = via.map { $0 == unreached }
        for block in 0..<snapshot.blockCount where leaked[block] && snapshot.kinds[block] == .sideTable {
            leaked[block] = object(ofSideTable: block, in: snapshot).map { via[$0] == unreached } ?? false
        }
        return leaked
    }

    func isReached(_ block: Int) -> Bool { via[block] != Self.unreached }

    /// The object a side table belongs to (its `sideTableToObject` edge), or nil.
    static func object(ofSideTable block: Int, in snapshot: HeapSnapshot) -> Int? {
        let row = Int(snapshot.edgeStart[block])..<Int(snapshot.edgeStart[block + 1])
        return row.first { snapshot.edgeKinds[$0] == .sideTableToObject }.map { Int(snapshot.edgeTargets[$0]) }
    }
}
