/// The process-wide figures jemalloc keeps about its own heap, in bytes.
///
/// All figures come from one `epoch` refresh. `allocatedBytes` counts size-class bytes (a 1,000-byte
/// request is a 1,024-byte region), not the bytes the application asked for, and it counts the freed
/// regions every thread keeps in its cache (`threadCacheBytes`) as allocated: `liveBytes` is the
/// heap the application holds.
public struct AllocatorStats: Sendable, Hashable, Codable {
    /// Bytes in regions handed out to the application (`stats.allocated`), size-class rounded.
    public var allocatedBytes: Int
    /// Bytes in active pages (`stats.active`): allocated plus the free tails of partly used pages.
    public var activeBytes: Int
    /// Bytes in physically resident pages mapped by jemalloc (`stats.resident`); lags frees by the decay time.
    public var residentBytes: Int
    /// Bytes in mapped extents (`stats.mapped`).
    public var mappedBytes: Int
    /// Bytes in virtual memory retained for reuse but not mapped (`stats.retained`).
    public var retainedBytes: Int
    /// Bytes of jemalloc's own metadata (`stats.metadata`).
    public var metadataBytes: Int
    /// Bytes of freed regions held in every thread's cache (`stats.arenas.<ALL>.tcache_bytes`): part of
    /// `allocatedBytes`, although the application freed them.
    public var threadCacheBytes: Int

    public init(
        allocatedBytes: Int = 0, activeBytes: Int = 0, residentBytes: Int = 0,
        mappedBytes: Int = 0, retainedBytes: Int = 0, metadataBytes: Int = 0, threadCacheBytes: Int = 0
    ) {
        self.allocatedBytes = allocatedBytes
        self.activeBytes = activeBytes
        self.residentBytes = residentBytes
        self.mappedBytes = mappedBytes
        self.retainedBytes = retainedBytes
        self.metadataBytes = metadataBytes
        self.threadCacheBytes = threadCacheBytes
    }

    /// The live heap: regions handed out and not freed (`allocatedBytes - threadCacheBytes`), bytes.
    ///
    /// The two figures are summed over the arenas in one pass, but a thread that fills its cache from an
    /// arena (or flushes it) while the pass runs can be counted on one side only: a reading taken while
    /// other threads allocate can be off by one cache fill or flush of a size class.
    public var liveBytes: Int { allocatedBytes - threadCacheBytes }
}

/// One reading of everything the sampler records about memory, in bytes.
public struct MemoryReading: Sendable, Hashable, Codable {
    /// jemalloc's figures.
    public var allocator: AllocatorStats
    /// The kernel's resident set size of the process (`VmRSS`), in bytes.
    public var rssBytes: Int

    public init(allocator: AllocatorStats, rssBytes: Int) {
        self.allocator = allocator
        self.rssBytes = rssBytes
    }
}

/// A source of memory readings; the sampler depends on this so tests can feed scripted readings.
public protocol MemoryProbe: Sendable {
    /// Takes one reading. Implementations used by the sampler must not allocate.
    func read() -> MemoryReading
    /// Bytes allocated so far by the calling thread (jemalloc's `thread.allocated`), or nil if unknown.
    func threadAllocatedBytes() -> UInt64?
    /// Called once on a sampling thread before the case's baseline: makes whatever the thread's first
    /// readings would make (allocator caches, lazily opened files), so none of it appears after the baseline.
    func prepareSamplingThread()
    /// A second snapshot of the allocator taken right after `read()`, to confirm a new peak; nil when the
    /// probe's readings need no confirming. Must not allocate.
    func confirmingReading() -> AllocatorStats?
}

extension MemoryProbe {
    /// Nothing: a probe that makes nothing lazily (a scripted one) needs no preparing.
    public func prepareSamplingThread() {}

    /// None: a probe whose readings are exact (a scripted one) needs no confirming.
    public func confirmingReading() -> AllocatorStats? { nil }
}

/// Errors of the allocator probe.
public enum AllocatorProbeError: Error, CustomStringConvertible, Equatable {
    /// jemalloc is linked but does not serve the process's allocations.
    case notProcessAllocator(movedBytes: Int, expectedAtLeast: Int)
    /// A `mallctl` call failed.
    case mallctlFailed(name: String, errno: Int32)
    /// A kernel file could not be read or written.
    case kernelFile(path: String, reason: String)

    public var description: String {
        switch self {
        case .notProcessAllocator(let moved, let expected):
            return
                "jemalloc is not the process allocator: a \(expected)-byte allocation moved stats.allocated by "
                + "\(moved) bytes. Link the unprefixed libjemalloc into the executable (install "
                + "libjemalloc-dev; `make build` does) and do not run under LD_PRELOAD of another allocator or "
                + "valgrind."
        case .mallctlFailed(let name, let errno):
            return
                "mallctl(\"\(name)\") failed with errno \(errno); this jemalloc build may lack statistics "
                + "(--disable-stats)."
        case .kernelFile(let path, let reason):
            return "\(path): \(reason)"
        }
    }
}
