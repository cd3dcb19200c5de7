/// The heap graph of one case: every capture's summary, the growth by type between captures, and the
/// captures that failed. Bounded: every list stops at the limits the analysis was given and counts the rest.
public struct HeapGraphSummary: Sendable, Hashable, Codable {
    /// The captures that succeeded, in the order they were taken.
    public var captures: [HeapCaptureSummary]
    /// Types whose count or bytes changed between consecutive generation captures: suspects first, then by
    /// bytes grown (most first), then by name.
    public var growth: [HeapTypeGrowth]
    /// Types that changed but are left out of `growth` by its bound.
    public var omittedGrowthTypes: Int
    /// The labels of the captures `growth` compares, in order (the generations).
    public var generationLabels: [String]
    /// Captures that could not be taken or read; a failed capture never fails the case.
    public var failures: [HeapCaptureFailure]
    /// The capture at the peak of the case's live bytes (taken at most a margin below it, see `HeapPeakCapture`),
    /// apart from `captures`: its leak figures are no verdict's (the block being freed when it was taken is already
    /// unreachable). Nil when none was taken (records made before it was, programs, a case that never rose).
    public var peak: HeapPeakCapture?
    /// What no root reached before the case's work began (a capture at a workload case's baseline; nothing for a
    /// program, whose process starts with an empty heap): the leak judgement subtracts it from the last capture's.
    /// Nil when it is not known (records made before it was kept, or a capture at the baseline that failed).
    public var unreachableBefore: UnreachableBlocks?

    public init(
        captures: [HeapCaptureSummary], growth: [HeapTypeGrowth] = [], omittedGrowthTypes: Int = 0,
        generationLabels: [String] = [], failures: [HeapCaptureFailure] = [],
        unreachableBefore: UnreachableBlocks? = nil, peak: HeapPeakCapture? = nil
    ) {
        self.captures = captures
        self.growth = growth
        self.omittedGrowthTypes = omittedGrowthTypes
        self.generationLabels = generationLabels
        self.failures = failures
        self.unreachableBefore = unreachableBefore
        self.peak = peak
    }

    /// The types that grew in every generation (at least two differences, each above zero).
    public var suspects: [HeapTypeName] { growth.filter(\.isSuspect).map(\.type) }

    /// The last capture, the one a case's leak figures come from (after teardown, by default).
    public var last: HeapCaptureSummary? { captures.last }

    /// Leaked blocks of the last capture (the case's figure for summary.csv and gates); nil without a capture.
    public var leakedBlocks: Int? { last?.leakedBlocks }
    /// Leaked bytes of the last capture; nil without a capture.
    public var leakedBytes: Int? { last?.leakedBytes }
    /// Leaked cycles of the last capture; nil without a capture.
    public var cycleCount: Int? { last?.cycleCount }
}

/// What no root reaches in one capture: the blocks, their bytes and the cycles among them.
public struct UnreachableBlocks: Sendable, Hashable, Codable {
    /// Blocks no root reaches.
    public var blocks: Int
    /// Their bytes.
    public var bytes: Int
    /// Leaked cycles among them.
    public var cycles: Int

    public init(blocks: Int, bytes: Int, cycles: Int) {
        self.blocks = blocks
        self.bytes = bytes
        self.cycles = cycles
    }

    /// Nothing unreachable: a process before its first allocation.
    public static let none = UnreachableBlocks(blocks: 0, bytes: 0, cycles: 0)

    /// What no root reaches in `capture`.
    public init(_ capture: HeapCaptureSummary) {
        self.init(blocks: capture.leakedBlocks, bytes: capture.leakedBytes, cycles: capture.cycleCount)
    }
}

/// One heap capture analysed: totals, leaked groups, retaining paths and live types.
public struct HeapCaptureSummary: Sendable, Hashable, Codable {
    /// What the capture was taken after (`after teardown`, `iteration 3`, a workload's own label).
    public var label: String
    /// When it was taken, nanoseconds since the case process started.
    public var timeNanoseconds: Int64
    /// Live blocks in the capture.
    public var liveBlocks: Int
    /// Their bytes (the sizes the capture recorded).
    public var liveBytes: Int
    /// Roots the capture found (globals, stack and register words, TLS) that point into the heap.
    public var rootCount: Int
    /// Blocks a root reaches over strong and unowned references.
    public var reachableBlocks: Int
    /// Their bytes.
    public var reachableBytes: Int
    /// Blocks no root reaches (side tables of reachable or freed objects excepted).
    public var leakedBlocks: Int
    /// Their bytes.
    public var leakedBytes: Int
    /// Leaked strongly connected components of more than one block, or of one block referencing itself.
    public var cycleCount: Int
    /// Groups whose root is a cycle no other leaked block references.
    public var rootCycleCount: Int
    /// Groups whose root is one leaked block no other leaked block references.
    public var rootLeakCount: Int
    /// The largest groups, those of one signature in one value with their count (bytes, most first); their counts,
    /// blocks and bytes plus the omitted ones' sum to the totals.
    public var groups: [HeapLeakGroup]
    /// Groups left out by the bound (all the groups of the signatures left out), their blocks and their bytes.
    public var omittedGroups: Int
    public var omittedGroupBlocks: Int
    public var omittedGroupBytes: Int
    /// The retaining paths asked for, in the order asked.
    public var paths: [HeapRetainingPath]
    /// Paths asked for but left out by the bound.
    public var omittedPaths: Int
    /// Live blocks per type, bytes most first.
    public var types: [HeapTypeTally]
    /// Types left out by the bound, and their bytes.
    public var omittedTypes: Int
    public var omittedTypeBytes: Int
    /// How much of the capture was named, and why the rest was not; nil in a summary written before it was kept.
    public var naming: HeapNamingSummary?
    /// The largest retainers of the reachable blocks by retained bytes, most first; nil in a summary written before
    /// they were kept.
    public var retainers: HeapRetainers?

    public init(label: String, timeNanoseconds: Int64) {
        self.label = label
        self.timeNanoseconds = timeNanoseconds
        liveBlocks = 0
        liveBytes = 0
        rootCount = 0
        reachableBlocks = 0
        reachableBytes = 0
        leakedBlocks = 0
        leakedBytes = 0
        cycleCount = 0
        rootCycleCount = 0
        rootLeakCount = 0
        groups = []
        omittedGroups = 0
        omittedGroupBlocks = 0
        omittedGroupBytes = 0
        paths = []
        omittedPaths = 0
        types = []
        omittedTypes = 0
        omittedTypeBytes = 0
    }
}

/// Count and bytes of the blocks of one type.
public struct HeapTypeTally: Sendable, Hashable, Codable {
    /// The type the blocks are of.
    public var type: HeapTypeName
    public var count: Int
    public var bytes: Int

    public init(type: HeapTypeName, count: Int, bytes: Int) {
        self.type = type
        self.count = count
        self.bytes = bytes
    }
}

/// Groups of leaked blocks as macOS `leaks` groups them (a root, a cycle or one block, and every leaked block it
/// reaches that an earlier group did not), the groups of one signature together: one row with their count.
public struct HeapLeakGroup: Sendable, Hashable, Codable {
    /// What the group's root is.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A cycle no leaked block outside it references.
        case rootCycle = "root-cycle"
        /// One leaked block, in no cycle, that no other leaked block references.
        case rootLeak = "root-leak"
    }

    /// A root cycle or a root leak.
    public var kind: Kind
    /// What the groups have in common, hashed (`LeakSignature`); nil in a summary written before it was kept.
    public var signature: String?
    /// Groups of this signature (1 in a summary written before they were counted).
    public var count: Int
    /// Blocks in the groups: their roots' and those the roots reach.
    public var blocks: Int
    public var bytes: Int
    /// Blocks of one group's root itself: the cycle's members, or 1.
    public var rootBlocks: Int
    /// The root's type (for a cycle, the type of the block its edges start from).
    public var rootType: HeapTypeName
    /// Blocks per type over the groups, bytes most first, then by name.
    public var types: [HeapTypeTally]
    public var omittedTypes: Int
    /// One member's allocation stack, innermost frame first (the root's when it has one); nil when no member has.
    public var allocationStack: [String]?
    /// For a root cycle, the cycle through its root block.
    public var cycle: HeapCycle?
    /// Cycles among the blocks the root reaches.
    public var nestedCycles: [HeapCycle]
    /// Nested cycles left out by the bound.
    public var omittedNestedCycles: Int

    public init(
        kind: Kind, signature: String? = nil, count: Int = 1, blocks: Int, bytes: Int, rootBlocks: Int,
        rootType: HeapTypeName, types: [HeapTypeTally], omittedTypes: Int = 0, allocationStack: [String]? = nil,
        cycle: HeapCycle? = nil, nestedCycles: [HeapCycle] = [], omittedNestedCycles: Int = 0
    ) {
        self.kind = kind
        self.signature = signature
        self.count = count
        self.blocks = blocks
        self.bytes = bytes
        self.rootBlocks = rootBlocks
        self.rootType = rootType
        self.types = types
        self.omittedTypes = omittedTypes
        self.allocationStack = allocationStack
        self.cycle = cycle
        self.nestedCycles = nestedCycles
        self.omittedNestedCycles = omittedNestedCycles
    }

    /// Decodes a group as written; one written before groups were counted is one group with no signature.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(Kind.self, forKey: .kind)
        signature = try container.decodeIfPresent(String.self, forKey: .signature)
        count = try container.decodeIfPresent(Int.self, forKey: .count) ?? 1
        blocks = try container.decode(Int.self, forKey: .blocks)
        bytes = try container.decode(Int.self, forKey: .bytes)
        rootBlocks = try container.decode(Int.self, forKey: .rootBlocks)
        rootType = try container.decode(HeapTypeName.self, forKey: .rootType)
        types = try container.decode([HeapTypeTally].self, forKey: .types)
        omittedTypes = try container.decode(Int.self, forKey: .omittedTypes)
        allocationStack = try container.decodeIfPresent([String].self, forKey: .allocationStack)
        cycle = try container.decodeIfPresent(HeapCycle.self, forKey: .cycle)
        nestedCycles = try container.decode([HeapCycle].self, forKey: .nestedCycles)
        omittedNestedCycles = try container.decode(Int.self, forKey: .omittedNestedCycles)
    }
}

/// A leaked cycle: its size and one shortest round trip through it, edge by edge in cycle order.
public struct HeapCycle: Sendable, Hashable, Codable {
    /// Blocks in the strongly connected component (more than the round trip when the component is not a ring).
    public var memberBlocks: Int
    /// Bytes of the component's blocks.
    public var memberBytes: Int
    /// The round trip: each edge's `to` is the next edge's `from`, the last edge's `to` the first's `from`.
    public var edges: [HeapCycleEdge]
    /// Edges of the round trip left out by the bound (from its end).
    public var omittedEdges: Int

    public init(memberBlocks: Int, memberBytes: Int, edges: [HeapCycleEdge], omittedEdges: Int = 0) {
        self.memberBlocks = memberBlocks
        self.memberBytes = memberBytes
        self.edges = edges
        self.omittedEdges = omittedEdges
    }
}

/// One reference of a cycle: `from.field -> to`.
public struct HeapCycleEdge: Sendable, Hashable, Codable {
    /// The type of the block holding the reference.
    public var from: HeapTypeName
    /// The field of `from` holding the reference, where reflection metadata names it.
    public var fieldName: String?
    /// Where in `from` the reference is, bytes from the block's start.
    public var byteOffset: Int
    /// What the reference is (`strong` in a retain cycle; an owned side table shows as `strong` at offset 8).
    public var kind: HeapEdgeKind
    public var to: HeapTypeName

    public init(from: HeapTypeName, fieldName: String?, byteOffset: Int, kind: HeapEdgeKind, to: HeapTypeName) {
        self.from = from
        self.fieldName = fieldName
        self.byteOffset = byteOffset
        self.kind = kind
        self.to = to
    }
}

/// The chain of references from a root to a block of an asked-for type (or an asked-for block): a shortest one
/// from the most recognisable root that reaches it (a global, static or thread-local storage, then a known
/// function's frame, then any stack word or register).
public struct HeapRetainingPath: Sendable, Hashable, Codable {
    /// What was asked: the type name as given, or the block's address in hexadecimal (`0x7f...`).
    public var query: String
    /// Why the path was asked for.
    public var reason: HeapPathReason
    /// Live blocks matching the query that a root reaches.
    public var reachableInstances: Int
    /// Live blocks matching the query that no root reaches (they are in the leak groups).
    public var leakedInstances: Int
    /// The root the path starts from; nil when no matching block is reachable (no path).
    public var root: HeapPathRoot?
    /// The blocks from the root's target to the matching block, each with the reference to the next.
    public var nodes: [HeapPathNode]
    /// Nodes left out of the middle of a long path (the first and last ones are kept).
    public var omittedNodes: Int
    /// The distinct roots the matching blocks' paths start from, with how many blocks each, most first (at most
    /// `maximumRootsPerPath` of the analysis); for a type that grew, the blocks that grew. Nil in a summary written
    /// before they were kept.
    public var roots: [HeapRootCount]?
    /// Distinct roots left out by the bound.
    public var omittedRoots: Int?
    /// The exact type asked for (a type that grew between generations), whose name may be empty: a block named by its
    /// allocation site; nil for a query by name or address, and in summaries written before it was kept.
    public var type: HeapTypeName?

    public init(
        query: String, reason: HeapPathReason, reachableInstances: Int, leakedInstances: Int, root: HeapPathRoot?,
        nodes: [HeapPathNode], omittedNodes: Int = 0, roots: [HeapRootCount]? = nil, omittedRoots: Int? = nil
    ) {
        self.query = query
        self.reason = reason
        self.reachableInstances = reachableInstances
        self.leakedInstances = leakedInstances
        self.root = root
        self.nodes = nodes
        self.omittedNodes = omittedNodes
        self.roots = roots
        self.omittedRoots = omittedRoots
    }

    /// True when every root found holds its blocks conservatively (a stack word in no known frame, a register):
    /// perhaps a stale value rather than an owner.
    public var onlyConservativeRoots: Bool {
        guard let roots, !roots.isEmpty, omittedRoots ?? 0 == 0 else { return root?.kind.isConservative ?? false }
        return roots.allSatisfy(\.root.kind.isConservative)
    }
}

/// A root and how many of a path's matching blocks are reached from it first.
public struct HeapRootCount: Sendable, Hashable, Codable {
    public var root: HeapPathRoot
    /// Matching blocks whose retaining path starts from this root.
    public var instances: Int

    public init(root: HeapPathRoot, instances: Int) {
        self.root = root
        self.instances = instances
    }
}

/// The root a retaining path starts from.
public struct HeapPathRoot: Sendable, Hashable, Codable {
    /// What holds the root (a global, a thread's stack or register, TLS).
    public var kind: HeapRootKind
    /// The capture's description of the root (a symbol with its offset, a thread and frame).
    public var description: String

    public init(kind: HeapRootKind, description: String) {
        self.kind = kind
        self.description = description
    }
}

/// One block of a retaining path and the reference that leads on to the next block.
public struct HeapPathNode: Sendable, Hashable, Codable {
    public var type: HeapTypeName
    /// The field holding the reference to the next node, where known; nil on the last node too.
    public var fieldName: String?
    /// Where in this block the reference to the next node is, bytes; nil on the last node.
    public var byteOffset: Int?
    /// The reference's kind (`strong` or `unowned`); nil on the last node.
    public var edgeKind: HeapEdgeKind?

    public init(type: HeapTypeName, fieldName: String? = nil, byteOffset: Int? = nil, edgeKind: HeapEdgeKind? = nil) {
        self.type = type
        self.fieldName = fieldName
        self.byteOffset = byteOffset
        self.edgeKind = edgeKind
    }
}

/// How one type's live count and bytes changed between consecutive generation captures.
public struct HeapTypeGrowth: Sendable, Hashable, Codable {
    public var type: HeapTypeName
    /// Live blocks at each generation capture (0 where absent).
    public var counts: [Int]
    /// Live bytes at each generation capture.
    public var bytes: [Int]
    /// True when there are at least two differences and every count difference, or every bytes
    /// difference, is above zero: the type grows in every iteration, reachable or not.
    public var isSuspect: Bool

    public init(type: HeapTypeName, counts: [Int], bytes: [Int], isSuspect: Bool) {
        self.type = type
        self.counts = counts
        self.bytes = bytes
        self.isSuspect = isSuspect
    }

    /// Count differences between consecutive captures.
    public var countDeltas: [Int] { zip(counts.dropFirst(), counts).map { $0 - $1 } }
    /// Bytes differences between consecutive captures.
    public var byteDeltas: [Int] { zip(bytes.dropFirst(), bytes).map { $0 - $1 } }
}

/// A heap capture that could not be taken or read: why. It never fails the case.
public struct HeapCaptureFailure: Sendable, Hashable, Codable {
    /// Why a capture failed.
    public enum Reason: String, Sendable, Hashable, Codable, CaseIterable {
        /// The agent was not preloaded into the process (no `--heap-graph` support there).
        case agentNotLoaded = "agent-not-loaded"
        /// The process's threads could not be stopped (or resumed) for the capture.
        case stopTheWorldFailed = "stop-the-world-failed"
        /// The capture did not finish within its time bound.
        case timedOut = "timed-out"
        /// The capture ran out of memory or of its space bound.
        case outOfMemory = "out-of-memory"
        /// The capture file is missing, truncated or malformed.
        case unreadable
        /// Anything else; `detail` says what.
        case other
    }

    /// The label of the capture that failed.
    public var label: String
    /// The kind of failure.
    public var reason: Reason
    /// What happened, as the capture or the reader reported it (an errno, a file offset).
    public var detail: String

    public init(label: String, reason: Reason, detail: String) {
        self.label = label
        self.reason = reason
        self.detail = detail
    }
}

/// The capture at a case's peak: its summary, and the exact live bytes of the peak it stands for.
public struct HeapPeakCapture: Sendable, Hashable, Codable {
    /// The capture's summary (its retainers say what held the peak).
    public var capture: HeapCaptureSummary
    /// The case's highest exact live bytes seen while captures at the peak were armed, bytes; the capture was taken
    /// at most the margin below it.
    public var peakLiveBytes: Int
    /// The live bytes the agent counted when it took the capture, bytes.
    public var capturedLiveBytes: Int
    /// Captures taken at successive highs (each replaced the one before).
    public var captureCount: Int
    /// What the captures cost the case: the time they took together (its threads stopped), nanoseconds.
    public var captureNanoseconds: Int64
    /// What the last capture cost after the case: its reading, naming and analysis, nanoseconds.
    public var analysisNanoseconds: Int64

    public init(
        capture: HeapCaptureSummary, peakLiveBytes: Int, capturedLiveBytes: Int, captureCount: Int,
        captureNanoseconds: Int64, analysisNanoseconds: Int64
    ) {
        self.capture = capture
        self.peakLiveBytes = peakLiveBytes
        self.capturedLiveBytes = capturedLiveBytes
        self.captureCount = captureCount
        self.captureNanoseconds = captureNanoseconds
        self.analysisNanoseconds = analysisNanoseconds
    }
}

/// The largest retainers of a capture: chains of the dominator tree aggregated by their path of types and fields.
public struct HeapRetainers: Sendable, Hashable, Codable {
    /// The largest chains by retained bytes, most first.
    public var rows: [HeapRetainer]
    /// Chains left out by the bound or for holding less than the threshold.
    public var omittedRows: Int
    /// Bytes the roots hold in all (the reachable blocks' bytes): what the rows' shares are of.
    public var reachableBytes: Int

    public init(rows: [HeapRetainer], omittedRows: Int, reachableBytes: Int) {
        self.rows = rows
        self.omittedRows = omittedRows
        self.reachableBytes = reachableBytes
    }
}

/// One retainer: blocks of the same path of types through the dominator tree, from the top (held by roots alone)
/// down to the blocks that hold the bytes, and what they retain together.
public struct HeapRetainer: Sendable, Hashable, Codable {
    /// A root that points at the chain's first block (one of them when many do); nil when none does directly (several
    /// owners hold the first blocks, none of them alone).
    public var root: HeapPathRoot?
    /// The chain from the dominator tree's top down, each node the blocks of one type under the node before.
    public var nodes: [HeapRetainerNode]
    /// Nodes left out of the middle of a long chain (the first and last ones are kept).
    public var omittedNodes: Int
    /// Bytes the retainer frees if its owner lets go: the retained bytes of the chain's first node the row is about
    /// (`nodes[firstRetainingNode]`).
    public var retainedBytes: Int
    /// The node from which the chain holds `retainedBytes` (the nodes above it hold more, shared with other rows).
    public var firstRetainingNode: Int
    /// The allocation stack of one block of the last node (of the chain when none of them has one), innermost first.
    public var allocationStack: [String]?

    public init(
        root: HeapPathRoot?, nodes: [HeapRetainerNode], omittedNodes: Int = 0, retainedBytes: Int,
        firstRetainingNode: Int, allocationStack: [String]? = nil
    ) {
        self.root = root
        self.nodes = nodes
        self.omittedNodes = omittedNodes
        self.retainedBytes = retainedBytes
        self.firstRetainingNode = firstRetainingNode
        self.allocationStack = allocationStack
    }

    /// The blocks the row is about: the last node's.
    public var count: Int { nodes.last?.count ?? 0 }
}

/// The blocks of one type at one place of a retainer's chain.
public struct HeapRetainerNode: Sendable, Hashable, Codable {
    public var type: HeapTypeName
    /// The field of the node before that references these blocks, where it does so directly and reflection names it.
    public var fieldName: String?
    /// Blocks.
    public var count: Int
    /// Their own bytes.
    public var shallowBytes: Int
    /// Their bytes and those of every block they dominate.
    public var retainedBytes: Int

    public init(type: HeapTypeName, fieldName: String? = nil, count: Int, shallowBytes: Int, retainedBytes: Int) {
        self.type = type
        self.fieldName = fieldName
        self.count = count
        self.shallowBytes = shallowBytes
        self.retainedBytes = retainedBytes
    }
}

/// The leak groups of one signature in a capture, as a comparison of two runs needs them: how many, how big, and the
/// type of their root (what a reader recognises the signature by).
public struct LeakSignatureTally: Sendable, Hashable, Codable {
    /// `HeapLeakGroup.signature`.
    public var signature: String
    /// Groups of this signature.
    public var groups: Int
    /// Their bytes.
    public var bytes: Int
    /// The type of one group's root (`HeapLeakGroup.rootType`).
    public var rootType: HeapTypeName

    public init(signature: String, groups: Int, bytes: Int, rootType: HeapTypeName) {
        self.signature = signature
        self.groups = groups
        self.bytes = bytes
        self.rootType = rootType
    }
}

extension HeapCaptureSummary {
    /// The signatures of the groups this summary lists (the largest: those left out by its bound have none here),
    /// bytes most first; groups written before signatures were kept have none and are not listed.
    public var leakSignatures: [LeakSignatureTally] {
        groups.compactMap { group in
            group.signature.map {
                LeakSignatureTally(signature: $0, groups: group.count, bytes: group.bytes, rootType: group.rootType)
            }
        }
    }
}
