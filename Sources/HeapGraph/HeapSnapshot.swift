import HarnessModel

/// One heap capture as a graph: live blocks, references between them, and the roots that point into it.
///
/// Compact for millions of blocks: struct-of-arrays columns with 32-bit indices and sizes, names and stacks
/// interned, a stack index kept only for the blocks that have one, and the references as compressed sparse rows
/// (the edges of block `b` are `edgeStart[b]..<edgeStart[b + 1]`): 21 bytes a block and 13 an edge in all
/// (`columnBytes`): 34 MB for a million blocks and a million references.
/// Built only by `HeapSnapshotBuilder`, which puts it in a canonical order: blocks by address, each block's
/// edges by byte offset, then target, roots by kind (globals first), description and slot. Everything an
/// analysis derives from it is therefore independent of the order the capture listed things in.
public struct HeapSnapshot: Sendable {
    /// What the capture was taken after (`after teardown`, `iteration 3`).
    public let label: String
    /// When, nanoseconds since the case process started.
    public let timeNanoseconds: Int64

    /// Interned strings: type names and field names. Index 0 is the empty name.
    public let names: [String]
    /// Interned allocation stacks, innermost frame first, each frame `function (file:line)`.
    public let stacks: [[String]]

    /// Block start addresses, ascending, unique.
    public let addresses: ContiguousArray<UInt64>
    /// Block sizes, bytes.
    public let sizes: HeapBlockSizes
    /// What each block is.
    public let kinds: ContiguousArray<HeapBlockKind>
    /// Index into `names` of each block's type name (0, the empty name, when unnamed).
    public let typeNames: ContiguousArray<UInt32>
    /// Index into `stacks` of each block's allocation stack, `HeapSnapshot.none` when none was recorded.
    public let stackIndices: HeapBlockStackIndices

    /// Start of each block's edges in the edge columns; one more entry than blocks.
    public let edgeStart: ContiguousArray<UInt32>
    /// Target block of each edge.
    public let edgeTargets: ContiguousArray<UInt32>
    /// Where in the source block the reference is, bytes.
    public let edgeByteOffsets: ContiguousArray<UInt32>
    /// What each reference is (only `strong` and `unowned` make a block reachable).
    public let edgeKinds: ContiguousArray<HeapEdgeKind>
    /// Index into `names` of each edge's field name, `HeapSnapshot.none` when unnamed.
    public let edgeFieldNames: ContiguousArray<UInt32>

    /// The roots, in canonical order (globals first).
    public let roots: [HeapSnapshotRoot]

    /// How much of the capture its reader could name, and why not the rest; nil for a graph not read from a capture.
    public let naming: HeapNamingSummary?

    /// The "no index" marker of `stackIndices` and `edgeFieldNames`.
    public static let none = UInt32.max

    /// Number of blocks.
    public var blockCount: Int { addresses.count }
    /// Number of edges.
    public var edgeCount: Int { edgeTargets.count }

    /// The bytes the block and edge columns take (names, stacks and roots left out), as allocated.
    public var columnBytes: Int {
        blockCount * (8 + 1 + 4) + sizes.columnBytes + stackIndices.columnBytes + (blockCount + 1) * 4
            + edgeCount * (4 + 4 + 1 + 4)
    }

    init(
        label: String, timeNanoseconds: Int64, names: [String], stacks: [[String]], blocks: HeapBlockColumns,
        edgeStart: ContiguousArray<UInt32>, edges: HeapEdgeColumns, roots: [HeapSnapshotRoot],
        naming: HeapNamingSummary?
    ) {
        self.label = label
        self.timeNanoseconds = timeNanoseconds
        self.names = names
        self.stacks = stacks
        addresses = blocks.addresses
        sizes = blocks.sizes
        kinds = blocks.kinds
        typeNames = blocks.typeNames
        stackIndices = blocks.stackIndices
        self.edgeStart = edgeStart
        edgeTargets = edges.targets
        edgeByteOffsets = edges.byteOffsets
        edgeKinds = edges.kinds
        edgeFieldNames = edges.fieldNames
        self.roots = roots
        self.naming = naming
    }

    /// The block at `address` exactly (a block's start), or nil.
    public func block(at address: UInt64) -> Int? {
        var low = 0
        var high = addresses.count
        while low < high {
            let middle = (low + high) / 2
            if addresses[middle] < address { low = middle + 1 } else { high = middle }
        }
        return low < addresses.count && addresses[low] == address ? low : nil
    }

    /// The block an edge starts from (a binary search over `edgeStart`).
    public func source(ofEdge edge: Int) -> Int {
        var low = 0
        var high = blockCount - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if Int(edgeStart[middle]) <= edge { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// The tally key of a block: its type name and kind; an unnamed block is told apart by its size and named by its
    /// allocation site.
    public func typeName(ofBlock block: Int) -> HeapTypeName {
        let name = names[Int(typeNames[block])]
        guard name.isEmpty else { return HeapTypeName(name: name, kind: kinds[block]) }
        return HeapTypeName(
            name: name, kind: kinds[block], unnamedBlockBytes: Int(sizes[block]),
            allocationSite: stack(ofBlock: block)?.first)
    }

    /// A block's allocation stack, or nil.
    public func stack(ofBlock block: Int) -> [String]? {
        let index = stackIndices[block]
        return index == Self.none ? nil : stacks[Int(index)]
    }

    /// An edge's field name, or nil.
    public func fieldName(ofEdge edge: Int) -> String? {
        let index = edgeFieldNames[edge]
        return index == Self.none ? nil : names[Int(index)]
    }
}

/// A root of a snapshot: what holds it, and the block it points at.
public struct HeapSnapshotRoot: Sendable, Hashable {
    /// What holds the root.
    public var kind: HeapRootKind
    /// How the capture describes it (`ProfileStore.shared`, `thread 3 "main" in App.run()`).
    public var description: String
    /// The block it points into.
    public var block: UInt32
    /// The address of the word holding the pointer (0 for a register).
    public var slotAddress: UInt64

    public init(kind: HeapRootKind, description: String, block: UInt32, slotAddress: UInt64) {
        self.kind = kind
        self.description = description
        self.block = block
        self.slotAddress = slotAddress
    }

    /// Globals first (a global is the most telling name for a path), then TLS, stacks, registers, others.
    var kindRank: Int {
        switch kind {
        case .global: return 0
        case .tls: return 1
        case .threadStack: return 2
        case .register: return 3
        case .other: return 4
        }
    }
}

/// The block columns a builder fills: one entry per block, in the capture's order.
public struct HeapBlockColumns: Sendable {
    /// Start address of each block; unique.
    public var addresses: ContiguousArray<UInt64> = []
    /// Size of each block, bytes.
    public var sizes = HeapBlockSizes()
    /// What each block is.
    public var kinds: ContiguousArray<HeapBlockKind> = []
    /// Index into the builder's names of each block's type name (an empty name: unnamed).
    public var typeNames: ContiguousArray<UInt32> = []
    /// Index into the builder's stacks of each block's allocation stack, `HeapSnapshot.none` for none.
    public var stackIndices = HeapBlockStackIndices()

    public init() {}

    public mutating func reserve(_ count: Int) {
        addresses.reserveCapacity(count)
        sizes.reserveCapacity(count)
        kinds.reserveCapacity(count)
        typeNames.reserveCapacity(count)
    }
}

/// The edge columns a builder fills: one entry per edge, in any order.
public struct HeapEdgeColumns: Sendable {
    /// Source block of each edge (builder order); dropped once the rows are built.
    public var sources: ContiguousArray<UInt32> = []
    /// Target block of each edge (builder order).
    public var targets: ContiguousArray<UInt32> = []
    /// Where in the source block each reference is, bytes.
    public var byteOffsets: ContiguousArray<UInt32> = []
    /// What each reference is.
    public var kinds: ContiguousArray<HeapEdgeKind> = []
    /// Index into the builder's names of each edge's field name, `HeapSnapshot.none` when unnamed.
    public var fieldNames: ContiguousArray<UInt32> = []

    public init() {}

    public mutating func reserve(_ count: Int) {
        sources.reserveCapacity(count)
        targets.reserveCapacity(count)
        byteOffsets.reserveCapacity(count)
        kinds.reserveCapacity(count)
        fieldNames.reserveCapacity(count)
    }
}

/// Block sizes, 32 bits each: a size of 4 GiB or more is kept apart (its 32-bit entry is `UInt32.max`), so a
/// million blocks' sizes take 4 MB, not 8.
public struct HeapBlockSizes: RandomAccessCollection, Sendable {
    private var narrow: ContiguousArray<UInt32> = []
    /// The sizes that do not fit in 32 bits, by block.
    private var wide: [Int: UInt64] = [:]

    public init() {}

    public var startIndex: Int { 0 }
    public var endIndex: Int { narrow.count }

    /// The size of `block`, bytes.
    public subscript(block: Int) -> UInt64 {
        let size = narrow[block]
        return size == UInt32.max ? wide[block] ?? UInt64(size) : UInt64(size)
    }

    public mutating func append(_ size: UInt64) {
        if size >= UInt64(UInt32.max) {
            wide[narrow.count] = size
            narrow.append(UInt32.max)
        } else {
            narrow.append(UInt32(size))
        }
    }

    public mutating func reserveCapacity(_ count: Int) { narrow.reserveCapacity(count) }

    /// The bytes the column takes.
    var columnBytes: Int { narrow.capacity * 4 + wide.count * 16 }
}

/// Each block's allocation stack index (`HeapSnapshot.none` for none), kept only for the blocks that have one: the
/// agent records the stack of a sampled few blocks in a heap of a million, so a dense column would be almost all
/// `none`. A lookup is a binary search; when every block has a stack the column takes 8 bytes a block, not 4.
public struct HeapBlockStackIndices: RandomAccessCollection, Sendable {
    public private(set) var endIndex = 0
    /// The blocks that have a stack, ascending.
    private var blocks: ContiguousArray<UInt32> = []
    /// Their stack indices.
    private var stacks: ContiguousArray<UInt32> = []

    public init() {}

    public var startIndex: Int { 0 }

    /// The stack index of `block`, or `HeapSnapshot.none`.
    public subscript(block: Int) -> UInt32 {
        precondition(block >= 0 && block < endIndex, "block \(block) outside 0..<\(endIndex)")
        var low = 0
        var high = blocks.count
        while low < high {
            let middle = (low + high) / 2
            if Int(blocks[middle]) < block { low = middle + 1 } else { high = middle }
        }
        return low < blocks.count && Int(blocks[low]) == block ? stacks[low] : HeapSnapshot.none
    }

    /// Appends the next block's stack index (`HeapSnapshot.none` for none).
    public mutating func append(_ stack: UInt32) {
        if stack != HeapSnapshot.none {
            blocks.append(UInt32(truncatingIfNeeded: endIndex))
            stacks.append(stack)
        }
        endIndex += 1
    }

    /// The blocks that have a stack, with their stack index, ascending by block.
    var entries: Zip2Sequence<ContiguousArray<UInt32>, ContiguousArray<UInt32>> { zip(blocks, stacks) }

    /// The bytes the column takes.
    var columnBytes: Int { (blocks.capacity + stacks.capacity) * 4 }
}
