import HarnessModel

/// Collects blocks, edges and roots in any order and builds a canonical `HeapSnapshot`.
///
/// Tests add one thing at a time (`addBlock` returns the index edges and roots refer to); a capture reader
/// fills the columns in bulk (`blocks`, `edges`, `roots`, with `intern` and `addStack` for the tables).
/// Indices given to the builder are the order blocks were added; `build()` sorts blocks by address and
/// renumbers everything, so the snapshot does not depend on the order of the input.
public struct HeapSnapshotBuilder: Sendable {
    /// What the capture was taken after (`after teardown`, `iteration 3`).
    public var label: String
    /// When the capture was taken, nanoseconds since the case process started.
    public var timeNanoseconds: Int64
    /// Interned type and field names.
    public private(set) var names: [String] = []
    /// Interned allocation stacks, innermost frame first.
    public private(set) var stacks: [[String]] = []
    /// The blocks, one entry per block in every column, in the order added.
    public var blocks = HeapBlockColumns()
    /// The edges, one entry per edge in every column; `sources` and `targets` are builder block indices.
    public var edges = HeapEdgeColumns()
    /// Roots; `block` is a builder index.
    public var roots: [HeapSnapshotRoot] = []
    /// How much of the capture was named (set by the capture's reader).
    public var naming: HeapNamingSummary?
    private var nameIndices: [String: UInt32] = [:]
    private var stackIndices: [[String]: UInt32] = [:]

    public init(label: String, timeNanoseconds: Int64 = 0) {
        self.label = label
        self.timeNanoseconds = timeNanoseconds
    }

    /// A builder over a reader's own tables: `names` (type and field names) and `stacks` (innermost frame
    /// first), which the indices given to `addBlock` and `addEdge` refer to. A name listed twice keeps both
    /// indices valid; `intern` returns the first.
    public init(label: String, timeNanoseconds: Int64 = 0, names: [String], stacks: [[String]]) {
        self.init(label: label, timeNanoseconds: timeNanoseconds)
        self.names = names
        self.stacks = stacks
        for (index, name) in names.enumerated().reversed() { nameIndices[name] = UInt32(truncatingIfNeeded: index) }
        for (index, stack) in stacks.enumerated().reversed() {
            stackIndices[stack] = UInt32(truncatingIfNeeded: index)
        }
    }

    /// Reserves room for `blocks` blocks and `edges` edges (a reader knows both from the capture's header).
    public mutating func reserve(blocks blockCount: Int, edges edgeCount: Int) {
        blocks.reserve(blockCount)
        edges.reserve(edgeCount)
    }

    /// The index of `name` in the names table, added when new.
    public mutating func intern(_ name: String) -> UInt32 {
        if let index = nameIndices[name] { return index }
        let index = UInt32(truncatingIfNeeded: names.count)
        names.append(name)
        nameIndices[name] = index
        return index
    }

    /// The index of an allocation stack (innermost frame first), added when new.
    public mutating func addStack(_ frames: [String]) -> UInt32 {
        if let index = stackIndices[frames] { return index }
        let index = UInt32(truncatingIfNeeded: stacks.count)
        stacks.append(frames)
        stackIndices[frames] = index
        return index
    }

    /// Adds a block; returns its builder index. An empty `typeName` leaves it unnamed.
    @discardableResult
    public mutating func addBlock(
        address: UInt64, sizeBytes: Int, kind: HeapBlockKind, typeName: String = "", stack: [String]? = nil
    ) -> UInt32 {
        let name = intern(typeName)
        let stackIndex = stack.map { addStack($0) } ?? HeapSnapshot.none
        return addBlock(
            address: address, sizeBytes: UInt64(max(sizeBytes, 0)), kind: kind, typeNameIndex: name,
            stackIndex: stackIndex)
    }

    /// Adds a block by table indices (`stackIndex` `HeapSnapshot.none` for none); returns its builder index.
    @discardableResult
    public mutating func addBlock(
        address: UInt64, sizeBytes: UInt64, kind: HeapBlockKind, typeNameIndex: UInt32, stackIndex: UInt32
    ) -> UInt32 {
        let index = UInt32(truncatingIfNeeded: blocks.addresses.count)
        blocks.addresses.append(address)
        blocks.sizes.append(sizeBytes)
        blocks.kinds.append(kind)
        blocks.typeNames.append(typeNameIndex)
        blocks.stackIndices.append(stackIndex)
        return index
    }

    /// Adds a reference from block `from` to block `to` (builder indices), `byteOffset` bytes into `from`.
    public mutating func addEdge(
        from: UInt32, to: UInt32, byteOffset: Int = 0, kind: HeapEdgeKind = .strong, fieldName: String? = nil
    ) {
        let field = fieldName.map { intern($0) } ?? HeapSnapshot.none
        addEdge(from: from, to: to, byteOffset: UInt32(clamping: byteOffset), kind: kind, fieldNameIndex: field)
    }

    /// Adds a reference by table indices (`fieldNameIndex` `HeapSnapshot.none` for none).
    public mutating func addEdge(
        from: UInt32, to: UInt32, byteOffset: UInt32, kind: HeapEdgeKind, fieldNameIndex: UInt32
    ) {
        edges.sources.append(from)
        edges.targets.append(to)
        edges.byteOffsets.append(byteOffset)
        edges.kinds.append(kind)
        edges.fieldNames.append(fieldNameIndex)
    }

    /// Adds a root pointing at `block` (a builder index).
    public mutating func addRoot(_ kind: HeapRootKind, description: String, block: UInt32, slotAddress: UInt64 = 0) {
        roots.append(HeapSnapshotRoot(kind: kind, description: description, block: block, slotAddress: slotAddress))
    }

    /// Checks every column and index, puts the graph in canonical order and returns the snapshot.
    public func build() throws(HeapGraphError) -> HeapSnapshot {
        try validate()
        let (blockOrder, newIndex) = try canonicalBlockOrder()
        let ordered = reorderBlocks(blockOrder)
        let (edgeStart, rows) = compressedRows(newIndex: newIndex, addresses: ordered.addresses)
        let sortedRoots = canonicalRoots(newIndex: newIndex, addresses: ordered.addresses)
        return HeapSnapshot(
            label: label, timeNanoseconds: timeNanoseconds, names: names, stacks: stacks, blocks: ordered,
            edgeStart: edgeStart, edges: rows, roots: sortedRoots, naming: naming)
    }
}

extension HeapSnapshotBuilder {
    private func validate() throws(HeapGraphError) {
        let count = blocks.addresses.count
        let blockColumns = [
            ("sizes", blocks.sizes.count), ("kinds", blocks.kinds.count), ("typeNames", blocks.typeNames.count),
            ("stackIndices", blocks.stackIndices.count),
        ]
        for (column, length) in blockColumns where length != count {
            throw .columnLengthsDiffer(table: "block", column: column, count: length, expected: count)
        }
        let edgeCount = edges.sources.count
        let edgeColumns = [
            ("targets", edges.targets.count), ("byteOffsets", edges.byteOffsets.count),
            ("kinds", edges.kinds.count), ("fieldNames", edges.fieldNames.count),
        ]
        for (column, length) in edgeColumns where length != edgeCount {
            throw .columnLengthsDiffer(table: "edge", column: column, count: length, expected: edgeCount)
        }
        // UInt32.max is the "none" marker and the analysis numbers edges and roots together in 32 bits.
        let limit = Int(UInt32.max) - 1
        if count > limit { throw .tooLarge(what: "blocks", count: count, limit: limit) }
        if edgeCount + roots.count > limit {
            throw .tooLarge(what: "edges and roots", count: edgeCount + roots.count, limit: limit)
        }
        try check(blocks.typeNames, "block typeName", below: names.count, none: false)
        for (block, stack) in blocks.stackIndices.entries where Int(stack) >= stacks.count {
            throw .indexOutOfRange(column: "block stackIndex", item: Int(block), index: Int(stack), count: stacks.count)
        }
        try check(edges.sources, "edge from", below: count, none: false)
        try check(edges.targets, "edge to", below: count, none: false)
        try check(edges.fieldNames, "edge fieldName", below: names.count, none: true)
        for (item, root) in roots.enumerated() where Int(root.block) >= count {
            throw .indexOutOfRange(column: "root block", item: item, index: Int(root.block), count: count)
        }
    }

    private func check(
        _ column: ContiguousArray<UInt32>, _ name: String, below count: Int, none: Bool
    ) throws(HeapGraphError) {
        for (item, value) in column.enumerated() where Int(value) >= count && !(none && value == HeapSnapshot.none) {
            throw .indexOutOfRange(column: name, item: item, index: Int(value), count: count)
        }
    }

    /// Builder indices in address order (nil when already in order) and each builder index's new index.
    private func canonicalBlockOrder() throws(HeapGraphError) -> ([UInt32]?, [UInt32]?) {
        let addresses = blocks.addresses
        if zip(addresses, addresses.dropFirst()).allSatisfy({ $0 < $1 }) { return (nil, nil) }
        let order = (0..<UInt32(truncatingIfNeeded: addresses.count)).sorted { addresses[Int($0)] < addresses[Int($1)] }
        for position in order.indices.dropFirst()
        where addresses[Int(order[position])] == addresses[Int(order[position - 1])] {
            throw .duplicateAddress(addresses[Int(order[position])])
        }
        var newIndex = [UInt32](repeating: 0, count: order.count)
        for (position, old) in order.enumerated() { newIndex[Int(old)] = UInt32(truncatingIfNeeded: position) }
        return (order, newIndex)
    }

    private func reorderBlocks(_ order: [UInt32]?) -> HeapBlockColumns {
        guard let order else { return blocks }
        var result = HeapBlockColumns()
        result.reserve(order.count)
        for old in order {
            let index = Int(old)
            result.addresses.append(blocks.addresses[index])
            result.sizes.append(blocks.sizes[index])
            result.kinds.append(blocks.kinds[index])
            result.typeNames.append(blocks.typeNames[index])
            result.stackIndices.append(blocks.stackIndices[index])
        }
        return result
    }
}

extension HeapSnapshotBuilder {
    /// The edges as compressed sparse rows over the new block indices: a counting sort by source, then each
    /// row by byte offset, target, kind and field name (values, not input positions: canonical).
    private func compressedRows(
        newIndex: [UInt32]?, addresses: ContiguousArray<UInt64>
    ) -> (ContiguousArray<UInt32>, HeapEdgeColumns) {
        let blockCount = addresses.count
        if newIndex == nil, let edgeStart = rowsInPlace(blockCount: blockCount) {
            // Already rows in canonical order (a capture lists each block's references by offset): the snapshot
            // takes the columns over as they are, not a sorted copy of them.
            var rows = edges
            rows.sources = []
            return (edgeStart, rows)
        }
        var sources = edges.sources
        var targets = edges.targets
        if let newIndex {
            for edge in sources.indices {
                sources[edge] = newIndex[Int(sources[edge])]
                targets[edge] = newIndex[Int(targets[edge])]
            }
        }
        var edgeStart = ContiguousArray<UInt32>(repeating: 0, count: blockCount + 1)
        for source in sources { edgeStart[Int(source) + 1] &+= 1 }
        for block in 0..<blockCount { edgeStart[block + 1] &+= edgeStart[block] }
        var cursor = Array(edgeStart.dropLast())
        var order = [UInt32](repeating: 0, count: sources.count)
        for (edge, source) in sources.enumerated() {
            order[Int(cursor[Int(source)])] = UInt32(truncatingIfNeeded: edge)
            cursor[Int(source)] &+= 1
        }
        sortRows(&order, edgeStart: edgeStart, targets: targets)
        var rows = HeapEdgeColumns()
        rows.reserve(order.count)
        for edge in order {
            let index = Int(edge)
            rows.targets.append(targets[index])
            rows.byteOffsets.append(edges.byteOffsets[index])
            rows.kinds.append(edges.kinds[index])
            rows.fieldNames.append(edges.fieldNames[index])
        }
        // The sources are implied by the rows from here on.
        rows.sources = []
        return (edgeStart, rows)
    }

    /// The row starts when the edges are already grouped by source in ascending order and each row is in
    /// canonical order (no edge precedes the one before it), else nil.
    private func rowsInPlace(blockCount: Int) -> ContiguousArray<UInt32>? {
        var edgeStart = ContiguousArray<UInt32>(repeating: 0, count: blockCount + 1)
        let inOrder = withEdgeOrder { precedes in
            edges.sources.withUnsafeBufferPointer { sources in
                for edge in sources.indices {
                    let source = Int(sources[edge])
                    if edge > 0
                        && (sources[edge - 1] > sources[edge]
                            || (sources[edge - 1] == sources[edge] && precedes(edge, edge - 1)))
                    {
                        return false
                    }
                    edgeStart[source + 1] &+= 1
                }
                return true
            }
        }
        guard inOrder else { return nil }
        for block in 0..<blockCount { edgeStart[block + 1] &+= edgeStart[block] }
        return edgeStart
    }

    /// Calls `body` with the canonical order of two edges within a row: by byte offset, target, kind and field
    /// name (values, not input positions), on unsafe buffers (a closure over the columns retained and released
    /// them on every comparison).
    private func withEdgeOrder<Result>(
        targets: ContiguousArray<UInt32>? = nil, _ body: ((Int, Int) -> Bool) -> Result
    ) -> Result {
        let names = names
        return edges.byteOffsets.withUnsafeBufferPointer { offsets in
            edges.kinds.withUnsafeBufferPointer { kinds in
                edges.fieldNames.withUnsafeBufferPointer { fields in
                    (targets ?? edges.targets).withUnsafeBufferPointer { targets in
                        func precedes(_ lhs: Int, _ rhs: Int) -> Bool {
                            if offsets[lhs] != offsets[rhs] { return offsets[lhs] < offsets[rhs] }
                            if targets[lhs] != targets[rhs] { return targets[lhs] < targets[rhs] }
                            if kinds[lhs] != kinds[rhs] { return kinds[lhs].rawValue < kinds[rhs].rawValue }
                            let left = fields[lhs] == HeapSnapshot.none ? "" : names[Int(fields[lhs])]
                            return left < (fields[rhs] == HeapSnapshot.none ? "" : names[Int(fields[rhs])])
                        }
                        return body(precedes)
                    }
                }
            }
        }
    }

    /// Insertion sort of each row (rows are short: a block's words) on unsafe buffers: a sort closure per
    /// row retained and released the columns on every comparison, 3 s for a million blocks.
    private func sortRows(
        _ order: inout [UInt32], edgeStart: ContiguousArray<UInt32>, targets: ContiguousArray<UInt32>
    ) {
        withEdgeOrder(targets: targets) { precedes in
            order.withUnsafeMutableBufferPointer { order in
                for block in 0..<(edgeStart.count - 1) {
                    let (low, high) = (Int(edgeStart[block]), Int(edgeStart[block + 1]))
                    guard high - low > 1 else { continue }
                    // A long row (an array's storage of many references) is sorted, not inserted.
                    guard high - low <= 64 else {
                        let sorted = order[low..<high].sorted { precedes(Int($0), Int($1)) }
                        for (slot, edge) in zip(low..<high, sorted) { order[slot] = edge }
                        continue
                    }
                    for next in (low + 1)..<high {
                        let edge = order[next]
                        var slot = next
                        while slot > low && precedes(Int(edge), Int(order[slot - 1])) {
                            order[slot] = order[slot - 1]
                            slot -= 1
                        }
                        order[slot] = edge
                    }
                }
            }
        }
    }

    /// Roots pointing at the new indices, sorted by kind (globals first), description, slot and target address.
    private func canonicalRoots(newIndex: [UInt32]?, addresses: ContiguousArray<UInt64>) -> [HeapSnapshotRoot] {
        let renumbered = roots.map { root in
            var root = root
            root.block = newIndex.map { $0[Int(root.block)] } ?? root.block
            return root
        }
        return renumbered.sorted { lhs, rhs in
            if lhs.kindRank != rhs.kindRank { return lhs.kindRank < rhs.kindRank }
            if lhs.description != rhs.description { return lhs.description < rhs.description }
            if lhs.slotAddress != rhs.slotAddress { return lhs.slotAddress < rhs.slotAddress }
            if lhs.block != rhs.block { return lhs.block < rhs.block }
            return String(describing: lhs.kind) < String(describing: rhs.kind)
        }
    }
}
