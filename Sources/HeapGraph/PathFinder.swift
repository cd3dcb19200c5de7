import HarnessModel

/// Retaining paths read back from the reachability walk's parent edges: each starts from the most recognisable root
/// that reaches its block (`Reachability.Tier`), and is a shortest one from such roots. A type's path goes to its
/// nearest instance (for a type that grew, its nearest instance among the blocks that grew), and the distinct
/// roots of all those instances are counted.
struct PathFinder {
    let snapshot: HeapSnapshot
    let reach: Reachability
    let limits: HeapGraphLimits
    /// Live addresses at the previous generation, ascending; nil when there is none.
    var previousGeneration: ContiguousArray<UInt64>?

    /// One path per distinct target, in the order asked, at most `limits.maximumPaths`; and how many were left out.
    func paths(for requested: [HeapPathTarget]) -> ([HeapRetainingPath], omitted: Int) {
        var seen = Set<HeapPathTarget>()
        let targets = requested.filter { seen.insert($0).inserted }
        let kept = Array(targets.prefix(limits.maximumPaths))
        let found = instances(of: kept)
        let paths = kept.enumerated().map { index, target in
            var path = path(
                to: found.nearest[index], target: target, reachable: found.reachable[index], leaked: found.leaked[index]
            )
            if path.root != nil { (path.roots, path.omittedRoots) = roots(found.roots[index]) }
            return path
        }
        return (paths, targets.count - kept.count)
    }

    private struct Instances {
        var nearest: [Int?]
        var reachable: [Int]
        var leaked: [Int]
        /// Per target: reachable matching blocks per root index (for a type that grew, the blocks that grew).
        var roots: [[UInt32: Int]]
    }

    /// For each target: its nearest reachable block (first in the walk's order), its instance counts, its roots.
    private func instances(of targets: [HeapPathTarget]) -> Instances {
        var found = Instances(
            nearest: Array(repeating: nil, count: targets.count), reachable: Array(repeating: 0, count: targets.count),
            leaked: Array(repeating: 0, count: targets.count), roots: Array(repeating: [:], count: targets.count))
        var byName = [[Int]](repeating: [], count: snapshot.names.count)
        for (index, target) in targets.enumerated() {
            switch target {
            case .block(let address, _):
                guard let block = snapshot.block(at: address) else { continue }
                if reach.isReached(block) {
                    (found.nearest[index], found.reachable[index]) = (block, 1)
                    found.roots[index][reach.rootOf[block]] = 1
                }
                if reach.leaked[block] { found.leaked[index] = 1 }
            case .type(let query, _):
                for (name, text) in snapshot.names.enumerated() where !query.isEmpty && Self.matches(text, query) {
                    byName[name].append(index)
                }
            case .exactType(let type, _):
                for (name, text) in snapshot.names.enumerated() where text == type.name { byName[name].append(index) }
            }
        }
        guard byName.contains(where: { !$0.isEmpty }) else { return found }
        func matching(_ block: Int) -> [Int] {
            byName[Int(snapshot.typeNames[block])].filter { isInstance(block, of: targets[$0]) }
        }
        let grew = (0..<snapshot.blockCount).filter { !byName[Int(snapshot.typeNames[$0])].isEmpty }
            .reduce(into: Set<Int>()) { grew, block in
                for index in matching(block) where reach.isReached(block) && isNew(block, for: targets[index]) {
                    grew.insert(index)
                }
            }
        for block in 0..<snapshot.blockCount where !byName[Int(snapshot.typeNames[block])].isEmpty {
            for index in matching(block) {
                if reach.isReached(block) {
                    found.reachable[index] += 1
                    if !grew.contains(index) || isNew(block, for: targets[index]) {
                        found.roots[index][reach.rootOf[block], default: 0] += 1
                    }
                } else if reach.leaked[block] {
                    found.leaked[index] += 1
                }
            }
        }
        var missing = Set(found.reachable.indices.filter { found.reachable[$0] > 0 && found.nearest[$0] == nil })
        for block in reach.order where !missing.isEmpty && !byName[Int(snapshot.typeNames[Int(block)])].isEmpty {
            for index in matching(Int(block))
            where (!grew.contains(index) || isNew(Int(block), for: targets[index])) && missing.remove(index) != nil {
                found.nearest[index] = Int(block)
            }
        }
        return found
    }

    /// True when `target` is a type that grew and `block` was not live at the previous generation.
    private func isNew(_ block: Int, for target: HeapPathTarget) -> Bool {
        guard target.reason == .growingType, let previous = previousGeneration else { return false }
        let address = snapshot.addresses[block]
        var (low, high) = (0, previous.count)
        while low < high {
            let middle = (low + high) / 2
            if previous[middle] < address { low = middle + 1 } else { high = middle }
        }
        return low == previous.count || previous[low] != address
    }

    /// The distinct roots (by kind and description: the words of one frame are one root), most instances first,
    /// ties in the roots' canonical order; at most `limits.maximumRootsPerPath`, and how many were left out.
    private func roots(_ counts: [UInt32: Int]) -> ([HeapRootCount], Int) {
        var merged: [HeapPathRoot: (instances: Int, first: UInt32)] = [:]
        for (index, instances) in counts {
            let root = snapshot.roots[Int(index)]
            let key = HeapPathRoot(kind: root.kind, description: root.description)
            let previous = merged[key] ?? (0, index)
            merged[key] = (previous.instances + instances, min(previous.first, index))
        }
        let sorted = merged.sorted { lhs, rhs in
            lhs.value.instances != rhs.value.instances
                ? lhs.value.instances > rhs.value.instances : lhs.value.first < rhs.value.first
        }
        let kept = sorted.prefix(limits.maximumRootsPerPath)
        return (kept.map { HeapRootCount(root: $0.key, instances: $0.value.instances) }, sorted.count - kept.count)
    }

    /// `name` is `query`, or `query` with a module (or enclosing type) in front: `App.ProfileScreen` for `ProfileScreen`.
    static func matches(_ name: String, _ query: String) -> Bool {
        name == query || name.hasSuffix("." + query)
    }

    private func isInstance(_ block: Int, of target: HeapPathTarget) -> Bool {
        guard case .exactType(let type, _) = target else { return true }
        return snapshot.typeName(ofBlock: block) == type
    }

    private func path(to block: Int?, target: HeapPathTarget, reachable: Int, leaked: Int) -> HeapRetainingPath {
        let query: String
        switch target {
        case .type(let name, _): query = name
        case .exactType(let type, _): query = type.name
        case .block(let address, _): query = "0x" + String(address, radix: 16)
        }
        var result = HeapRetainingPath(
            query: query, reason: target.reason, reachableInstances: reachable, leakedInstances: leaked, root: nil,
            nodes: [])
        if case .exactType(let type, _) = target { result.type = type }
        guard let block else { return result }
        // The edges from the root's block to `block`, nearest the root first.
        var edges: [Int] = []
        var current = block
        while Int(reach.via[current]) < reach.edgeCount {
            let edge = Int(reach.via[current])
            edges.append(edge)
            current = snapshot.source(ofEdge: edge)
        }
        edges.reverse()
        let root = snapshot.roots[Int(reach.via[current]) - reach.edgeCount]
        result.root = HeapPathRoot(kind: root.kind, description: root.description)
        let total = edges.count + 1
        let kept = limits.keptPathPositions(total)
        result.nodes = kept.map { position in
            guard position < edges.count else { return HeapPathNode(type: snapshot.typeName(ofBlock: block)) }
            let edge = edges[position]
            return HeapPathNode(
                type: snapshot.typeName(ofBlock: snapshot.source(ofEdge: edge)),
                fieldName: snapshot.fieldName(ofEdge: edge),
                byteOffset: Int(snapshot.edgeByteOffsets[edge]), edgeKind: snapshot.edgeKinds[edge])
        }
        result.omittedNodes = total - kept.count
        return result
    }
}
