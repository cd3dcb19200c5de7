/// A program's resident set at one moment, split into what holds it. Each part is measured, none is what is left of
/// the resident set: the allocator's split is jemalloc's (allocated, active, dirty and muzzy pages), its metadata the
/// pages of its own mappings the kernel holds resident beyond those, and the rest is the kernel's (smaps: mapped code
/// and files, stacks, other anonymous mappings). `unexplainedBytes` is the measured resident set less their sum (see
/// there for a set that moved while the parts were read).
public struct ResidentBreakdown: Sendable, Hashable, Codable {
    /// When it was read.
    public enum Point: String, Sendable, Hashable, Codable {
        /// The highest resident set explained while the program ran (a new high at least 3% above the one explained
        /// before it, read again once it settled when it moved while its parts were read; of equal ones the first read
        /// while it held still). The exit's own sample explains only the end.
        case peak
        /// At exit, after the atexit handlers.
        case end
    }
    public var point: Point
    /// Since the case's origin.
    public var timeNanoseconds: Int64
    /// The resident set (statm) read right after the parts.
    public var measuredBytes: Int
    /// The resident set read right before the parts: the two bound what the parts saw while memory moved.
    public var measuredBeforeBytes: Int
    /// jemalloc's `stats.allocated`: the live heap.
    public var liveHeapBytes: Int
    /// jemalloc's `stats.active` less `stats.allocated`: free space in pages that hold live blocks.
    public var activeBeyondAllocatedBytes: Int
    /// Free pages jemalloc keeps mapped and resident until they decay (`pdirty`).
    public var dirtyBytes: Int
    /// Free pages jemalloc has given back lazily (MADV_FREE) and the kernel has not taken yet (`pmuzzy`).
    public var muzzyBytes: Int
    /// The resident pages of jemalloc's own mappings per the kernel (mincore); nil when the agent lost track of them.
    public var allocatorPagesBytes: Int?
    /// jemalloc's `stats.resident`: its own count of its resident pages, an upper bound (it counts metadata pages
    /// it never touched).
    public var allocatorReportedResidentBytes: Int
    /// Thread stacks: `[stack]` and the read-write mappings right above a guard page.
    public var stacksBytes: Int
    /// Mapped code and files (the executable, libraries, memory-mapped files, the kernel's vdso).
    public var mappedFilesBytes: Int
    /// Anonymous mappings that are neither jemalloc's nor stacks (a runtime's own heap, mmap by the program).
    public var otherAnonymousBytes: Int
    /// The malloc that served the program; nil: jemalloc (and breakdowns recorded before it was said).
    ///
    /// On glibc the parts read: live heap = mallinfo2's in-use bytes (uordblks + hblkhd, chunk headers included);
    /// `dirtyBytes` = the free bytes its arenas hold (fordblks, the top chunk included), active beyond allocated and
    /// muzzy 0; allocator pages = the resident pages of its heaps (`[heap]` and the other arenas' heaps, from smaps)
    /// plus its chunks of their own mapping (hblkhd, counted whole, taken out of other anonymous); reported resident =
    /// what it holds from the kernel (arena + hblkhd).
    public var allocator: Allocator?
    /// glibc only: what `malloc_trim` would give back at least (mallinfo2's keepcost: the releasable top of the main
    /// arena; trimming also returns whole free pages inside the arenas, which glibc does not count); nil on jemalloc.
    public var releasableBytes: Int?
    /// glibc only: its arenas seen (the main arena and each other arena's first heap); nil on jemalloc.
    public var arenaCount: Int?

    public init(
        point: Point, timeNanoseconds: Int64, measuredBytes: Int, measuredBeforeBytes: Int, liveHeapBytes: Int,
        activeBeyondAllocatedBytes: Int, dirtyBytes: Int, muzzyBytes: Int, allocatorPagesBytes: Int?,
        allocatorReportedResidentBytes: Int, stacksBytes: Int, mappedFilesBytes: Int, otherAnonymousBytes: Int
    ) {
        self.point = point
        self.timeNanoseconds = timeNanoseconds
        self.measuredBytes = measuredBytes
        self.measuredBeforeBytes = measuredBeforeBytes
        self.liveHeapBytes = liveHeapBytes
        self.activeBeyondAllocatedBytes = activeBeyondAllocatedBytes
        self.dirtyBytes = dirtyBytes
        self.muzzyBytes = muzzyBytes
        self.allocatorPagesBytes = allocatorPagesBytes
        self.allocatorReportedResidentBytes = allocatorReportedResidentBytes
        self.stacksBytes = stacksBytes
        self.mappedFilesBytes = mappedFilesBytes
        self.otherAnonymousBytes = otherAnonymousBytes
    }

    /// Free memory the allocator holds: active beyond allocated, dirty and muzzy.
    public var allocatorFreeBytes: Int { activeBeyondAllocatedBytes + dirtyBytes + muzzyBytes }
    /// What a purge (`arena.<all>.purge`) would give back to the kernel: the dirty and muzzy pages; on glibc what
    /// `malloc_trim` would give back at least (`releasableBytes`).
    public var purgeableBytes: Int { allocator == .glibc ? releasableBytes ?? 0 : dirtyBytes + muzzyBytes }
    /// The allocator's metadata: its resident pages (the kernel's count, or jemalloc's own when the kernel's is
    /// unknown) beyond active, dirty and muzzy. Negative when jemalloc counts active pages the kernel never faulted in.
    public var allocatorMetadataBytes: Int {
        (allocatorPagesBytes ?? allocatorReportedResidentBytes) - activeBeyondAllocatedBytes - liveHeapBytes
            - dirtyBytes - muzzyBytes
    }
    /// The sum of the parts.
    public var explainedBytes: Int {
        liveHeapBytes + allocatorFreeBytes + allocatorMetadataBytes + stacksBytes + mappedFilesBytes
            + otherAnonymousBytes
    }
    /// The measured resident set less the parts; negative when the parts exceed it. When the set moved while the parts
    /// were read, each part was read at some moment between the readings before and after: a sum between the two is
    /// what the set held at such a moment and leaves nothing unexplained, and the rest is the sum's distance from the
    /// nearer reading (a point read while uploads still came in: 85.29 MiB before, 87.81 MiB after, parts 85.30 MiB).
    public var unexplainedBytes: Int {
        let before = measuredBeforeBytes > 0 ? measuredBeforeBytes : measuredBytes
        let (low, high) = (min(before, measuredBytes), max(before, measuredBytes))
        let sum = explainedBytes
        return sum < low ? low - sum : sum > high ? high - sum : 0
    }
    /// How far the resident set moved while the parts were read (after less before; 0 when not read before).
    public var movedWhileReadBytes: Int { measuredBeforeBytes > 0 ? measuredBytes - measuredBeforeBytes : 0 }
    /// `unexplainedBytes` as a fraction of the measured resident set.
    public var unexplainedFraction: Double {
        measuredBytes > 0 ? Double(unexplainedBytes) / Double(measuredBytes) : 0
    }

    /// The names of the parts' metrics at the peak, in `metrics`' order; the ratio's last.
    static let partNames = [
        "rssMeasured", "rssLiveHeap", "rssAllocatorFree", "rssAllocatorMetadata", "rssStacks", "rssMappedFiles",
        "rssOtherAnonymous", "rssPurgeable", "rssUnexplained", "rssUnexplainedRatio",
    ]

    /// The names of `metrics` at both points.
    public static let metricNames = Set(partNames + partNames.map { $0 + "AtEnd" })

    /// The metrics that hold the resident pages of mapped files, at both points: the measured set, the mapped files
    /// and what the parts leave unexplained. Which file pages a run has resident depends on the page cache as the
    /// machine's other work and its reclaim left it (a fault maps only cached pages around it).
    public static let pageCacheMetricNames = Set(
        ["rssMeasured", "rssMappedFiles", "rssUnexplained", "rssUnexplainedRatio"].flatMap { [$0, $0 + "AtEnd"] })

    /// The parts as metrics, named `rss<Part>` (at the peak) or `rss<Part>AtEnd`: threshold-able as
    /// `metrics.rssLiveHeap` and so on.
    public var metrics: [Metric] {
        let suffix = point == .end ? "AtEnd" : ""
        let parts = [
            measuredBytes, liveHeapBytes, allocatorFreeBytes, allocatorMetadataBytes, stacksBytes, mappedFilesBytes,
            otherAnonymousBytes, purgeableBytes, unexplainedBytes,
        ]
        return zip(Self.partNames, parts).map { Metric(name: $0 + suffix, value: Double($1), unit: .bytes) }
            + [Metric(name: Self.partNames[parts.count] + suffix, value: unexplainedFraction, unit: .ratio)]
    }
}
