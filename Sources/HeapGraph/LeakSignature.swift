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

    /// A reference as the shape knows it, without building its text: the holder's and the target's type (a name's
    /// index, the kind, the size where it is the type's) and the field (a name's index, or a byte offset).
    private struct Reference: Hashable {
        var from: TypeKey
        var field: Int64
        var to: TypeKey
    }

    private struct TypeKey: Hashable {
        var name: UInt32
        var kind: HeapBlockKind
        var size: UInt64
    }

    /// The distinct references among a cycle's blocks, one per line, sorted.
    private func cycleShape(_ component: Int) -> String {
        let graph = grouping.graph
        var references = Set<Reference>()
        var texts: [Reference: String] = [:]
        for member in grouping.members(ofComponent: component) {
            let from = key(ofVertex: Int(member))
            for edge in graph.edges(of: Int(member)) where graph.component[Int(graph.targets[edge])] == component {
                let reference = Reference(
                    from: from, field: fieldKey(ofEdge: edge, from: from), to: key(ofVertex: Int(graph.targets[edge])))
                if references.insert(reference).inserted {
                    texts[reference] =
                        label(reference.from) + " " + field(ofEdge: edge, from: Int(member)) + " -> "
                        + label(reference.to)
                }
            }
        }
        return texts.values.sorted().joined(separator: "\n")
    }

    private func key(ofVertex vertex: Int) -> TypeKey {
        let block = Int(grouping.graph.blocks[vertex])
        let name = snapshot.typeNames[block]
        let kind = snapshot.kinds[block]
        let sized = snapshot.names[Int(name)].isEmpty && hasFixedLayout(kind)
        return TypeKey(name: name, kind: kind, size: sized ? snapshot.sizes[block] : 0)
    }

    private func label(_ key: TypeKey) -> String {
        let name = snapshot.names[Int(key.name)]
        guard name.isEmpty else { return name + " " + String(describing: key.kind) }
        return key.size > 0 ? "\(key.kind) of \(key.size) bytes" : "\(key.kind)"
    }

    /// What `field(ofEdge:from:)` says, as a number: -1 the side table word, -2 a collection's slot, a field name's
    /// index plus 2^32, or the byte offset.
    private func fieldKey(ofEdge edge: Int, from holder: TypeKey) -> Int64 {
        let origin = grouping.graph.origins[edge]
        guard origin != LeakedGraph.ownerEdge else { return -1 }
        let name = snapshot.edgeFieldNames[Int(origin)]
        if name != HeapSnapshot.none { return Int64(name) + (1 << 32) }
        return hasFixedLayout(holder.kind) ? Int64(snapshot.edgeByteOffsets[Int(origin)]) : -2
    }

    /// A root leak's type.
    private func rootLabel(_ component: Int) -> String {
        label(key(ofVertex: Int(grouping.members(ofComponent: component).first ?? 0)))
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
