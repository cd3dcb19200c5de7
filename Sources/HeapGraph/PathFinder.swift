import HarnessModel

/// Retaining paths read back from the reachability walk's parent edges: the walk is breadth first from all
/// roots at once, so each path is a shortest one (ties: roots in canonical order, globals first; edges by offset).
struct PathFinder {
    let snapshot: HeapSnapshot
    let reach: Reachability
    let limits: HeapGraphLimits

    /// One path per distinct target, in the order asked, at most `limits.maximumPaths`; and how many were left out.
    func paths(for requested: [HeapPathTarget]) -> ([HeapRetainingPath], omitted: Int) {
        var seen = Set<HeapPathTarget>()
        let targets = requested.filter { seen.insert($0).inserted }
        let kept = Array(targets.prefix(limits.maximumPaths))
        let found = instances(of: kept)
        let paths = kept.enumerated().map { index, target in
            path(
                to: found.nearest[index], target: target, reachable: found.reachable[index], leaked: found.leaked[index]
            )
        }
        return (paths, targets.count - kept.count)
    }

    private struct Instances {
        var nearest: [Int?]
        var reachable: [Int]
        var leaked: [Int]
    }

    /// For each target: its nearest reachable block (first in the walk's order) and its instance counts.
    private func instances(of targets: [HeapPathTarget]) -> Instances {
        var found = Instances(
            nearest: Array(repeating: nil, count: targets.count), reachable: Array(repeating: 0, count: targets.count),
            leaked: Array(repeating: 0, count: targets.count))
        var byName = [[Int]](repeating: [], count: snapshot.names.count)
        for (index, target) in targets.enumerated() {
            switch target {
            case .block(let address, _):
                guard let block = snapshot.block(at: address) else { continue }
                if reach.isReached(block) { (found.nearest[index], found.reachable[index]) = (block, 1) }
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
        for block in 0..<snapshot.blockCount where !byName[Int(snapshot.typeNames[block])].isEmpty {
            for index in matching(block) {
                if reach.isReached(block) {
                    found.reachable[index] += 1
                } else if reach.leaked[block] {
                    found.leaked[index] += 1
                }
            }
        }
        var missing = Set(found.reachable.indices.filter { found.reachable[$0] > 0 && found.nearest[$0] == nil })
        for block in reach.order where !missing.isEmpty && !byName[Int(snapshot.typeNames[Int(block)])].isEmpty {
            for index in matching(Int(block)) where missing.remove(index) != nil { found.nearest[index] = Int(block) }
        }
        return found
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
