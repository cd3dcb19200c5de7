import HarnessModel

/// How many of each thing a summary keeps; the rest is counted, never silently dropped.
public struct HeapGraphLimits: Sendable, Hashable, Codable {
    /// Leak groups per capture (the largest by bytes).
    public var maximumGroups = 50
    /// Retaining paths per capture (in the order asked).
    public var maximumPaths = 20
    /// Types per capture (the largest by bytes).
    public var maximumTypes = 100
    /// Types listed per leak group.
    public var maximumTypesPerGroup = 10
    /// Nested cycles listed per leak group.
    public var maximumNestedCycles = 10
    /// Edges of one cycle's round trip.
    public var maximumCycleEdges = 24
    /// Nodes of one retaining path (the first and last halves are kept).
    public var maximumPathNodes = 24
    /// Types in a case's growth table.
    public var maximumGrowthTypes = 100
    /// Distinct roots listed per retaining path (the most instances first).
    public var maximumRootsPerPath = 3
    /// Retainers per capture (the largest by retained bytes).
    public var maximumRetainers = 20
    /// The least share of the reachable bytes a retainer holds to be listed (it is counted otherwise).
    public var minimumRetainerShare = 0.005

    public init() {}
}

extension HeapGraphLimits {
    /// The positions a path or chain of `total` nodes keeps: all of them, or, past `maximumPathNodes`, its two ends
    /// (where it starts and what it reaches).
    func keptPathPositions(_ total: Int) -> [Int] {
        let head = total > maximumPathNodes ? (maximumPathNodes + 1) / 2 : total
        let tail = total > maximumPathNodes ? maximumPathNodes - head : 0
        return Array(0..<head) + Array((total - tail)..<total)
    }
}

/// A block a retaining path is asked for.
public enum HeapPathTarget: Sendable, Hashable {
    /// The nearest live block whose type name is `name`, or ends with `.name` (module left out).
    case type(named: String, reason: HeapPathReason)
    /// The nearest live block of exactly this type (name, kind, and size for an unnamed block).
    case exactType(HeapTypeName, reason: HeapPathReason)
    /// The block starting at `address`.
    case block(address: UInt64, reason: HeapPathReason)

    var reason: HeapPathReason {
        switch self {
        case .type(_, let reason), .exactType(_, let reason), .block(_, let reason): return reason
        }
    }
}

/// What an analysis is asked for and how much it keeps.
public struct HeapAnalysisOptions: Sendable, Hashable {
    /// Blocks and types whose retaining paths are wanted (tracked survivors, `--retained-by` types).
    public var targets: [HeapPathTarget]
    /// How many groups, paths and types the summary keeps.
    public var limits: HeapGraphLimits
    /// The addresses of the blocks live at the previous generation capture, ascending (`HeapSnapshot.addresses`):
    /// a type that grew is explained by the blocks not among them, the ones that grew. Nil: no previous generation.
    public var previousGeneration: ContiguousArray<UInt64>?

    public init(
        targets: [HeapPathTarget] = [], limits: HeapGraphLimits = HeapGraphLimits(),
        previousGeneration: ContiguousArray<UInt64>? = nil
    ) {
        self.targets = targets
        self.limits = limits
        self.previousGeneration = previousGeneration
    }

    /// The options of a case's captures: the retaining paths of the types asked for (`retainedBy`) and of the
    /// tracked types with an object alive after teardown (`survivors`; a count of zero asks for nothing).
    public init(retainedBy: [String], survivors: [TypeCount] = []) {
        self.init(
            targets: retainedBy.map { .type(named: $0, reason: .requestedType) }
                + survivors.filter { $0.count > 0 }.map { .type(named: $0.typeName, reason: .trackedSurvivor) })
    }
}

/// One capture analysed: the bounded summary that goes into run.json, and the full type census the
/// generations are computed from.
public struct HeapCaptureAnalysis: Sendable {
    /// The bounded summary for run.json.
    public var summary: HeapCaptureSummary
    /// Every type's live count and bytes (unbounded), for the generations.
    public var census: HeapTypeCensus
}

/// The heap graph's analysis: reachability, leak groups, retaining paths, retainers and types. Plain functions over
/// a `HeapSnapshot`; deterministic (the snapshot is canonical, every tie is broken by address or name).
public enum HeapAnalysis {
    /// The largest retainers of a capture: its dominator tree, each block's retained bytes, the chains that hold the
    /// most (`analyse` includes them; apart for a benchmark that times them).
    public static func retainers(_ snapshot: HeapSnapshot, limits: HeapGraphLimits = HeapGraphLimits()) -> HeapRetainers
    {
        RetainedSize(snapshot: snapshot, tree: DominatorTree(snapshot), limits: limits).retainers()
    }

    /// What no root reaches in a capture, and its leaked cycles: reachability and the leaked graph's components alone
    /// (what `analyse` says of them, without groups, signatures, paths, retainers or types).
    public static func unreachable(_ snapshot: HeapSnapshot) -> UnreachableBlocks {
        let reach = Reachability(snapshot)
        var blocks = 0
        var bytes = 0
        for block in 0..<snapshot.blockCount where reach.leaked[block] {
            blocks += 1
            bytes += Int(snapshot.sizes[block])
        }
        guard blocks > 0 else { return UnreachableBlocks(blocks: 0, bytes: 0, cycles: 0) }
        let grouping = LeakGrouping(LeakedGraph(snapshot, leaked: reach.leaked))
        let cycles = (0..<grouping.graph.componentCount).filter { grouping.isCycle($0) }.count
        return UnreachableBlocks(blocks: blocks, bytes: bytes, cycles: cycles)
    }

    /// Analyses one capture. `census` may be passed when already computed (`HeapGenerationTracker` does).
    public static func analyse(
        _ snapshot: HeapSnapshot, options: HeapAnalysisOptions = HeapAnalysisOptions(), census: HeapTypeCensus? = nil
    ) -> HeapCaptureAnalysis {
        let census = census ?? HeapTypeCensus(snapshot)
        let reach = Reachability(snapshot)
        var summary = HeapCaptureSummary(label: snapshot.label, timeNanoseconds: snapshot.timeNanoseconds)
        summary.liveBlocks = snapshot.blockCount
        summary.liveBytes = snapshot.sizes.reduce(0) { $0 + Int($1) }
        summary.rootCount = snapshot.roots.count
        summary.naming = snapshot.naming
        // Every live block is reachable or leaked: a side table no word points at belongs to its object (kept by it,
        // or freed by the runtime with the last weak reference once the object is gone), so it counts as reachable.
        for block in 0..<snapshot.blockCount {
            if reach.leaked[block] {
                summary.leakedBlocks += 1
                summary.leakedBytes += Int(snapshot.sizes[block])
            } else {
                summary.reachableBlocks += 1
                summary.reachableBytes += Int(snapshot.sizes[block])
            }
        }
        let grouping = LeakGrouping(LeakedGraph(snapshot, leaked: reach.leaked))
        var groups = GroupSummarizer(snapshot: snapshot, grouping: grouping, limits: options.limits)
        groups.fill(&summary)
        (summary.paths, summary.omittedPaths) = PathFinder(
            snapshot: snapshot, reach: reach, limits: options.limits, previousGeneration: options.previousGeneration
        )
        .paths(for: options.targets)
        summary.retainers = retainers(snapshot, limits: options.limits)
        summary.types = Array(census.tallies.prefix(options.limits.maximumTypes))
        summary.omittedTypes = census.tallies.count - summary.types.count
        summary.omittedTypeBytes = census.tallies.dropFirst(summary.types.count).reduce(0) { $0 + $1.bytes }
        return HeapCaptureAnalysis(summary: summary, census: census)
    }
}
