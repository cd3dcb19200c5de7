import HarnessModel

/// What the roots reach: one breadth-first walk over strong and unowned edges, with the edge (or root) each block
/// was first reached by, so a retaining path can be read back, and the root that path starts from.
///
/// The walk prefers roots a developer recognises: it starts from the globals, statics and thread-local storage and
/// reaches all it can from them before it adds the stack words of frames whose function is known, and only then the
/// rest (stack words in no known frame, registers). Each block's path thus starts from the most recognisable root
/// that reaches it at all, and is a shortest one from such roots (ties: roots in canonical order; edges by offset).
struct Reachability {
    /// Per block: `unreached`; an edge index below `edgeCount`; or `edgeCount + r` for root `r`.
    var via: [UInt32]
    /// Per reached block: the root its path starts from (an index into the snapshot's roots).
    var rootOf: [UInt32]
    /// Reached blocks in the order the walk reached them (nearest first).
    var order: [UInt32]
    /// Per block: no root reaches it and it is not a side table whose object is reached or freed.
    var leaked: [Bool]
    let edgeCount: Int

    static let unreached = UInt32.max

    /// How recognisable a root is, most first: the walk drains each tier before it starts the next.
    enum Tier: Int, CaseIterable {
        /// A global, a static, thread-local storage: named, and alive as long as the program or the thread.
        case named
        /// A stack word in a frame whose function is known.
        case frame
        /// A stack word in no known frame, a register, anything else: conservative, perhaps a stale value.
        case conservative

        init(_ kind: HeapRootKind) {
            switch kind {
            case .global, .tls: self = .named
            default: self = kind.isConservative ? .conservative : .frame
            }
        }
    }

    /// Walks `snapshot` from its roots, tier by tier (`Tier`), each in canonical order; edges in row order (by
    /// offset). `weak` and `sideTableToObject` edges are never followed: they do not keep anything alive.
    init(_ snapshot: HeapSnapshot) {
        edgeCount = snapshot.edgeCount
        var via = [UInt32](repeating: Self.unreached, count: snapshot.blockCount)
        var rootOf = [UInt32](repeating: Self.unreached, count: snapshot.blockCount)
        var order: [UInt32] = []
        order.reserveCapacity(snapshot.blockCount)
        let tiers = snapshot.roots.map { Tier($0.kind) }
        var head = 0
        for tier in Tier.allCases {
            for (rootIndex, root) in snapshot.roots.enumerated()
            where tiers[rootIndex] == tier && via[Int(root.block)] == Self.unreached {
                via[Int(root.block)] = UInt32(truncatingIfNeeded: edgeCount + rootIndex)
                rootOf[Int(root.block)] = UInt32(truncatingIfNeeded: rootIndex)
                order.append(root.block)
            }
            Self.walk(snapshot, from: &head, order: &order, via: &via, rootOf: &rootOf)
        }
        self.via = via
        self.rootOf = rootOf
        self.order = order
        leaked = Self.leakedBlocks(snapshot, via: via)
    }

    /// Breadth first from `order[head...]` until no new block is reached.
    private static func walk(
        _ snapshot: HeapSnapshot, from head: inout Int, order: inout [UInt32], via: inout [UInt32],
        rootOf: inout [UInt32]
    ) {
        snapshot.edgeStart.withUnsafeBufferPointer { start in
            snapshot.edgeTargets.withUnsafeBufferPointer { targets in
                snapshot.edgeKinds.withUnsafeBufferPointer { kinds in
                    while head < order.count {
                        let block = Int(order[head])
                        head += 1
                        for edge in Int(start[block])..<Int(start[block + 1]) {
                            let kind = kinds[edge]
                            guard kind == .strong || kind == .unowned else { continue }
                            let target = Int(targets[edge])
                            if via[target] == Self.unreached {
                                via[target] = UInt32(truncatingIfNeeded: edge)
                                rootOf[target] = rootOf[block]
                                order.append(UInt32(truncatingIfNeeded: target))
                            }
                        }
                    }
                }
            }
        }
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
