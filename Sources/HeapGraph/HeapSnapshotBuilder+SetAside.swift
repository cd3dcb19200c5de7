import HarnessModel

extension HeapSnapshotBuilder {
    /// Takes `blocks` (builder indices, ascending) out of the graph: memory that is not the user's (the harness's own,
    /// found by its allocation stacks), as the agent keeps the blocks of its harness mode out of every capture. What
    /// they hold stays held: each block of the user's they reference strongly (or `unowned`: its memory stays in use)
    /// gets a root described by `description`; their weak references and the roots and references to them go.
    /// Nothing happens when `blocks` is empty.
    public mutating func setAside(_ blocks: [UInt32], heldBy description: String) {
        guard !blocks.isEmpty else { return }
        let count = self.blocks.addresses.count
        // Each block's new index, `HeapSnapshot.none` for those set aside.
        var newIndex = ContiguousArray<UInt32>(repeating: 0, count: count)
        for block in blocks where Int(block) < count { newIndex[Int(block)] = HeapSnapshot.none }
        var kept = HeapBlockColumns()
        kept.reserve(count - blocks.count)
        for block in 0..<count where newIndex[block] != HeapSnapshot.none {
            newIndex[block] = UInt32(truncatingIfNeeded: kept.addresses.count)
            kept.addresses.append(self.blocks.addresses[block])
            kept.sizes.append(self.blocks.sizes[block])
            kept.kinds.append(self.blocks.kinds[block])
            kept.typeNames.append(self.blocks.typeNames[block])
            kept.stackIndices.append(self.blocks.stackIndices[block])
        }
        self.blocks = kept
        var held = Set<UInt32>()
        var edges = HeapEdgeColumns()
        for edge in self.edges.sources.indices {
            let source = newIndex[Int(self.edges.sources[edge])]
            let target = newIndex[Int(self.edges.targets[edge])]
            guard target != HeapSnapshot.none else { continue }
            guard source != HeapSnapshot.none else {
                let kind = self.edges.kinds[edge]
                if kind == .strong || kind == .unowned { held.insert(target) }
                continue
            }
            edges.sources.append(source)
            edges.targets.append(target)
            edges.byteOffsets.append(self.edges.byteOffsets[edge])
            edges.kinds.append(self.edges.kinds[edge])
            edges.fieldNames.append(self.edges.fieldNames[edge])
        }
        self.edges = edges
        roots = roots.compactMap { root in
            let target = newIndex[Int(root.block)]
            guard target != HeapSnapshot.none else { return nil }
            var moved = root
            moved.block = target
            return moved
        }
        for target in held.sorted() { addRoot(.other, description: description, block: target) }
    }
}
