import HarnessModel

/// The signature of each leak group: a short hash of what the same leak has in common wherever and whenever it
/// happens, so the groups of one leak are one row with a count, and two runs (or machines) name it alike.
///
/// As LeakCanary signs a leak trace by its suspect references (class and field names, never object ids), the
/// shape hashed here is made of names only: the group's kind; its root's type; for a root cycle, the distinct
/// references among the cycle's blocks, each as holder type, field and target type; the same for every cycle the
/// group holds; and the root's allocation site (its innermost frame) when the block carries a stack. A reference
/// without a field name is given by its byte offset in a block of fixed layout (an object, a closure context, a
/// box, a block of a known size) and as `*` in a collection's storage, whose offsets are element indices. The sites
/// are those of all the root's blocks, sorted, so the block a cycle is drawn from (which may depend on addresses)
/// does not matter. The types the root reaches outside cycles, block counts, addresses and stack words are left
/// out: they vary from one instance of the same leak to the next.
struct LeakSignature {
    /// Hexadecimal digits of a signature (48 bits of SHA-256: no collision in practice among a run's leaks).
    static let length = 12

    let snapshot: HeapSnapshot
    let grouping: LeakGrouping

    /// The signature of every group, in group order; groups of equal shape share one string.
    func signatures() -> [String] {
        var cycleShapes: [Int: String] = [:]
        var nested = [[String]](repeating: [], count: grouping.groupCount)
        for component in 0..<grouping.graph.componentCount where grouping.isCycle(component) {
            let shape = cycleShape(component)
            cycleShapes[component] = shape
            guard grouping.referencedFromOutside[component], let first = grouping.members(ofComponent: component).first
            else { continue }
            nested[Int(grouping.groupOf[Int(first)])].append(shape)
        }
        var hashes: [String: String] = [:]
        return (0..<grouping.groupCount).map { group in
            let root = Int(grouping.rootComponents[group])
            var text = cycleShapes[root].map { "root-cycle\n" + $0 } ?? "root-leak " + rootLabel(root)
            text += Array(Set(nested[group])).sorted().map { "\nholds\n" + $0 }.joined()
            if let site = site(of: root) { text += "\nallocated at " + site }
            if let known = hashes[text] { return known }
            let hash = String(SHA256.hex(Array(text.utf8)).prefix(Self.length))
            hashes[text] = hash
            return hash
        }
    }

    /// The distinct references among a cycle's blocks, one per line, sorted.
    private func cycleShape(_ component: Int) -> String {
        let graph = grouping.graph
        var lines = Set<String>()
        for member in grouping.members(ofComponent: component) {
            let from = label(ofVertex: Int(member))
            for edge in graph.edges(of: Int(member)) where graph.component[Int(graph.targets[edge])] == component {
                let to = label(ofVertex: Int(graph.targets[edge]))
                lines.insert(from + " " + field(ofEdge: edge, from: Int(member)) + " -> " + to)
            }
        }
        return lines.sorted().joined(separator: "\n")
    }

    /// A root leak's type.
    private func rootLabel(_ component: Int) -> String {
        label(ofVertex: Int(grouping.members(ofComponent: component).first ?? 0))
    }

    /// A block's type by name; an unnamed block by its kind, and by its size where the size is the type's.
    private func label(ofVertex vertex: Int) -> String {
        let block = Int(grouping.graph.blocks[vertex])
        let name = snapshot.names[Int(snapshot.typeNames[block])]
        let kind = snapshot.kinds[block]
        guard name.isEmpty else { return name + " " + String(describing: kind) }
        return hasFixedLayout(kind) ? "\(kind) of \(snapshot.sizes[block]) bytes" : "\(kind)"
    }

    /// A reference's field: its name, its byte offset in a block of fixed layout, or `*` in a collection.
    private func field(ofEdge edge: Int, from vertex: Int) -> String {
        let origin = grouping.graph.origins[edge]
        // An object's refcount word holds its side table's address.
        guard origin != LeakedGraph.ownerEdge else { return "+8" }
        if let name = snapshot.fieldName(ofEdge: Int(origin)) { return "." + name }
        let kind = snapshot.kinds[Int(grouping.graph.blocks[vertex])]
        return hasFixedLayout(kind) ? "+\(snapshot.edgeByteOffsets[Int(origin)])" : "*"
    }

    private func hasFixedLayout(_ kind: HeapBlockKind) -> Bool {
        switch kind {
        case .arrayStorage, .dictionaryStorage, .setStorage, .stringStorage: return false
        default: return true
        }
    }

    /// The innermost frames of the allocation stacks of the root's blocks that carry one and name code (a bare
    /// address differs from one run to the next), distinct and sorted; nil when there is none.
    private func site(of component: Int) -> String? {
        var sites = Set<String>()
        for member in grouping.members(ofComponent: component) {
            let frame = snapshot.stack(ofBlock: Int(grouping.graph.blocks[Int(member)]))?.first
            if let frame, !frame.hasPrefix("0x") { sites.insert(frame) }
        }
        return sites.isEmpty ? nil : sites.sorted().joined(separator: ", ")
    }
}
