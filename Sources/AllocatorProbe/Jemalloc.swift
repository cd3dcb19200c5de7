import CJemalloc
import Synchronization

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: it links jemalloc and reads its statistics with mallctl")
#endif

/// Where the start-up check publishes its block, so its allocation cannot be optimized away.
private let allocationSink = Atomic<UInt>(0)

/// Reads jemalloc's statistics through `mallctlbymib` with MIBs resolved once.
///
/// `read()` writes `epoch` (without it `stats.*` never move) and then reads seven figures; it
/// allocates nothing, so the sampler can call it on its hot path. The refresh and the reads that follow
/// it are one locked snapshot: a reading on one thread never mixes figures of two refreshes made by
/// two threads (the sampler's and the phase boundaries').
///
/// Every `mallctl` the readings use is checked once, when the probe is made: `init` resolves each name
/// and refreshes and reads every figure, and throws `mallctlFailed` with the name when one fails. After
/// that a read cannot fail: jemalloc refuses a read of a resolved statistic only for a wrong MIB or value
/// size, and both are fixed. A failure at read time would be a jemalloc defect: a debug build traps on it;
/// a release build reads the figure as 0 (reporting it would take an allocation on the sampling path).
public final class JemallocProbe: MemoryProbe, @unchecked Sendable {
    // Safety: after init the MIB storage is only read; mallctlbymib is thread-safe; `snapshot` orders
    // the epoch writes and the reads of each snapshot.
    private static let statNames = [
        "stats.allocated", "stats.active", "stats.resident",
        "stats.mapped", "stats.retained", "stats.metadata",
    ]
    private static let mibCapacity = 8
    /// `MALLCTL_ARENAS_ALL` in jemalloc 5: the merged figures of every arena.
    private static let allArenas = 4096

    /// The slots of the MIB storage.
    private enum Slot {
        static let epoch = 0
        /// `stats.allocated` ... `stats.metadata`: slots 1...6, in the order of `statNames`.
        static let stats = 1...6
        static let allocated = 1
        static let threadAllocated = 7
        static let threadCacheBytes = 8
        static let threadCacheFlush = 9
        static let purge = 10
        static let threadCacheEnabled = 11
        /// `thread.deallocated`, `thread.peak.read`, `thread.peak.reset`: slots 12...14, optional (`thread.peak`
        /// came with jemalloc 5.3): a slot that does not resolve has length 0 and reads as unknown.
        static let threadDeallocated = 12
        static let threadPeakRead = 13
        static let threadPeakReset = 14
        static let optional = 12...14
        static let count = 15
    }

    /// The names of the slots, in slot order.
    private static let slotNames =
        ["epoch"] + statNames + [
            "thread.allocated", "stats.arenas.\(allArenas).tcache_bytes", "thread.tcache.flush",
            "arena.\(allArenas).purge", "thread.tcache.enabled", "thread.deallocated", "thread.peak.read",
            "thread.peak.reset",
        ]

    /// MIBs, by `Slot`. By MIB, not by name: a Swift string passed as a C string is copied to the heap in
    /// debug builds, and settling must not allocate.
    private let mibs: UnsafeMutablePointer<Int>
    private let mibLengths: UnsafeMutablePointer<Int>
    private let rss: ResidentSetReader
    private let snapshot = Mutex(())

    /// Resolves every MIB, then refreshes and reads every figure once; throws when this jemalloc lacks one
    /// (a build without statistics).
    public init() throws(AllocatorProbeError) {
        let mibs = UnsafeMutablePointer<Int>.allocate(capacity: Slot.count * Self.mibCapacity)
        mibs.initialize(repeating: 0, count: Slot.count * Self.mibCapacity)
        let mibLengths = UnsafeMutablePointer<Int>.allocate(capacity: Slot.count)
        mibLengths.initialize(repeating: Self.mibCapacity, count: Slot.count)
        do {
            try Self.resolve(mibs: mibs, lengths: mibLengths)
        } catch {
            mibs.deallocate()
            mibLengths.deallocate()
            throw error
        }
        self.mibs = mibs
        self.mibLengths = mibLengths
        rss = ResidentSetReader()
    }

    /// Resolves the MIB of every slot and checks the calls the readings make: the refresh, and a read of
    /// each figure.
    private static func resolve(mibs: UnsafeMutablePointer<Int>, lengths: UnsafeMutablePointer<Int>)
        throws(AllocatorProbeError)
    {
        for (slot, name) in slotNames.enumerated() {
            var length = mibCapacity
            let status = mallctlnametomib(name, mibs + slot * mibCapacity, &length)
            if status != 0 && Slot.optional.contains(slot) {
                lengths[slot] = 0
                continue
            }
            guard status == 0 else { throw .mallctlFailed(name: name, errno: status) }
            lengths[slot] = length
        }
        var epoch: UInt64 = 1
        let refreshed = mallctlbymib(mibs, lengths[Slot.epoch], nil, nil, &epoch, MemoryLayout<UInt64>.size)
        guard refreshed == 0 else { throw .mallctlFailed(name: "epoch", errno: refreshed) }
        for slot in Array(Slot.stats) + [Slot.threadCacheBytes] {
            var value = 0
            var length = MemoryLayout<Int>.size
            let status = mallctlbymib(mibs + slot * mibCapacity, lengths[slot], &value, &length, nil, 0)
            guard status == 0 else { throw .mallctlFailed(name: slotNames[slot], errno: status) }
        }
    }

    deinit {
        mibs.deallocate()
        mibLengths.deallocate()
    }

    /// Makes `stats.*` current (writes `epoch`).
    @inline(__always)
    public func refresh() {
        snapshot.withLock { _ in refreshUnlocked() }
    }

    @inline(__always)
    private func refreshUnlocked() {
        var epoch: UInt64 = 1
        let status = mallctlbymib(mibs, mibLengths[Slot.epoch], nil, nil, &epoch, MemoryLayout<UInt64>.size)
        // Checked in init; cannot fail since (see the type's comment).
        assert(status == 0, "writing jemalloc's epoch failed")
    }

    @inline(__always)
    private func readSize(slot: Int) -> Int {
        var value = 0
        var length = MemoryLayout<Int>.size
        let status = mallctlbymib(mibs + slot * Self.mibCapacity, mibLengths[slot], &value, &length, nil, 0)
        // Checked in init; cannot fail since (see the type's comment). A release build reads 0.
        assert(status == 0, "reading a jemalloc statistic failed")
        return value
    }

    /// Refreshes and reads the seven figures, as one snapshot. Allocation-free.
    public func readAllocator() -> AllocatorStats {
        snapshot.withLock { _ in
            refreshUnlocked()
            return AllocatorStats(
                allocatedBytes: readSize(slot: 1), activeBytes: readSize(slot: 2),
                residentBytes: readSize(slot: 3), mappedBytes: readSize(slot: 4),
                retainedBytes: readSize(slot: 5), metadataBytes: readSize(slot: 6),
                threadCacheBytes: readSize(slot: Slot.threadCacheBytes)
            )
        }
    }

    /// Refreshes and reads only `stats.allocated`, in bytes (freed regions in thread caches included). Allocation-free.
    public func allocatedBytes() -> Int {
        snapshot.withLock { _ in
            refreshUnlocked()
            return readSize(slot: Slot.allocated)
        }
    }

    /// Refreshes and reads the live heap, `stats.allocated` minus the freed regions held in thread caches,
    /// from one snapshot, in bytes (see `AllocatorStats.liveBytes`). Allocation-free.
    public func liveBytes() -> Int {
        snapshot.withLock { _ in
            refreshUnlocked()
            return readSize(slot: Slot.allocated) - readSize(slot: Slot.threadCacheBytes)
        }
    }

    /// Refreshes and reads the bytes of freed regions held in every thread's cache
    /// (`stats.arenas.<ALL>.tcache_bytes`). Allocation-free.
    public func threadCacheBytes() -> Int {
        snapshot.withLock { _ in
            refreshUnlocked()
            return readSize(slot: Slot.threadCacheBytes)
        }
    }

    /// jemalloc's figures plus the kernel's current RSS. Allocation-free.
    public func read() -> MemoryReading {
        MemoryReading(allocator: readAllocator(), rssBytes: rss.currentBytes())
    }

    /// A second snapshot (`readAllocator()`): jemalloc sums the thread caches and the arenas in one pass
    /// while other threads allocate, so a cache that fills or flushes during the pass can be counted on one
    /// side only; a second pass rarely catches the same move. Allocation-free.
    public func confirmingReading() -> AllocatorStats? { readAllocator() }

    /// The live heap read twice, back to back: the lower reading and how far the two disagreed, bytes
    /// (see `confirmingReading()`). Allocation-free.
    public func confirmedLiveBytes() -> (bytes: Int, spreadBytes: Int) {
        let first = liveBytes()
        let second = liveBytes()
        return (min(first, second), abs(first - second))
    }

    /// Turns the calling thread's allocator cache off and takes one reading: a sampling thread allocates
    /// nothing, so a cache would only hold its own storage (tens of KiB counted as allocated).
    public func prepareSamplingThread() {
        disableThreadCache()
        _ = read()
        _ = threadAllocatedBytes()
    }

    /// Bytes allocated so far by the calling thread (`thread.allocated`, monotonic). Allocation-free.
    public func threadAllocatedBytes() -> UInt64? { readThreadCounter(slot: Slot.threadAllocated) }

    /// Bytes freed so far by the calling thread (`thread.deallocated`, monotonic); nil when unknown.
    /// Allocation-free.
    public func threadDeallocatedBytes() -> UInt64? { readThreadCounter(slot: Slot.threadDeallocated) }

    /// The calling thread's high-water mark of its net bytes (allocated minus freed on it) since the last
    /// `resetThreadPeak()` (`thread.peak.read`, updated every 64 KiB of the thread's traffic and at the read),
    /// bytes; nil when this jemalloc lacks it (before 5.3). Allocation-free.
    public func threadPeakBytes() -> UInt64? { readThreadCounter(slot: Slot.threadPeakRead) }

    /// Restarts the calling thread's high-water mark at its net bytes now (`thread.peak.reset`); false when
    /// this jemalloc lacks it. Allocation-free.
    @discardableResult
    public func resetThreadPeak() -> Bool {
        let slot = Slot.threadPeakReset
        guard mibLengths[slot] > 0 else { return false }
        return mallctlbymib(mibs + slot * Self.mibCapacity, mibLengths[slot], nil, nil, nil, 0) == 0
    }

    private func readThreadCounter(slot: Int) -> UInt64? {
        guard mibLengths[slot] > 0 else { return nil }
        var value: UInt64 = 0
        var length = MemoryLayout<UInt64>.size
        let status = mallctlbymib(mibs + slot * Self.mibCapacity, mibLengths[slot], &value, &length, nil, 0)
        return status == 0 ? value : nil
    }

    /// Returns the calling thread's cached regions to their arenas (`thread.tcache.flush`). Allocation-free.
    ///
    /// Only the calling thread's cache: other threads' caches still count in `stats.allocated` (not in
    /// `liveBytes()`). Returns false, having done nothing, when the thread has no cache (jemalloc's EFAULT:
    /// `opt.tcache` is off or `disableThreadCache()` turned it off): there is nothing to flush then, so
    /// callers that only want the cache empty ignore the result.
    @discardableResult
    public func flushThreadCache() -> Bool {
        let slot = Slot.threadCacheFlush
        let status = mallctlbymib(mibs + slot * Self.mibCapacity, mibLengths[slot], nil, nil, nil, 0)
        assert(status == 0 || status == EFAULT, "thread.tcache.flush failed with errno \(status)")
        return status == 0
    }

    /// Turns the calling thread's cache off (`thread.tcache.enabled`), returning what it held and the
    /// cache's own storage to the arenas: for a thread that allocates nothing while it measures, the
    /// cache is storage that counts as allocated for nothing. Later allocations of the thread go to the arenas.
    ///
    /// Returns false when jemalloc refused (the name resolved in init, so only a jemalloc defect could make it
    /// refuse); the thread then keeps its cache, which only adds its storage to the figures.
    @discardableResult
    public func disableThreadCache() -> Bool {
        var enabled = false
        let slot = Slot.threadCacheEnabled
        let status = mallctlbymib(
            mibs + slot * Self.mibCapacity, mibLengths[slot], nil, nil, &enabled, MemoryLayout<Bool>.size)
        assert(status == 0, "thread.tcache.enabled failed with errno \(status)")
        return status == 0
    }

    /// Returns every arena's unused dirty pages to the kernel at once (`arena.<ALL>.purge`),
    /// so `stats.resident` no longer lags frees by the decay time. Allocation-free.
    ///
    /// Returns false when jemalloc refused (the MIB resolved in init, and purging every arena takes no
    /// argument that could be wrong, so only a jemalloc defect could make it refuse); `stats.resident` then
    /// keeps lagging, which the report's resident figures already allow for.
    @discardableResult
    public func purgeAllArenas() -> Bool {
        let slot = Slot.purge
        let status = mallctlbymib(mibs + slot * Self.mibCapacity, mibLengths[slot], nil, nil, nil, 0)
        assert(status == 0, "arena.<ALL>.purge failed with errno \(status)")
        return status == 0
    }

    /// Checks that jemalloc serves this process's mallocs: a 1 MiB block must move the calling thread's own
    /// `thread.allocated` by at least its size. The thread's counter, not the process-wide `stats.allocated`:
    /// in a test process other tests free meanwhile, and their frees once made a 1 MiB block look like 37 KiB
    /// to a process-wide check. Without the per-thread counter, `stats.allocated` must move by half the size.
    public func verifyIsProcessAllocator() throws(AllocatorProbeError) {
        let size = 1 << 20
        let threadBefore = threadAllocatedBytes()
        let before = allocatedBytes()
        guard let block = malloc(size) else {
            throw AllocatorProbeError.notProcessAllocator(movedBytes: 0, expectedAtLeast: size)
        }
        memset(block, 1, size)
        // Publish the block so the optimizer cannot drop the malloc/free pair as unobserved.
        allocationSink.store(UInt(bitPattern: block), ordering: .relaxed)
        let threadAfter = threadAllocatedBytes()
        let after = allocatedBytes()
        free(block)
        if let threadBefore, let threadAfter {
            // `thread.allocated` only grows; a malloc that is not jemalloc's leaves it where it was.
            let moved = Int(truncatingIfNeeded: threadAfter &- threadBefore)
            guard moved >= size else { throw .notProcessAllocator(movedBytes: moved, expectedAtLeast: size) }
            return
        }
        // Other threads may free meanwhile; a half-size threshold still tells "counted" from "not counted".
        if after - before < size / 2 {
            throw AllocatorProbeError.notProcessAllocator(movedBytes: after - before, expectedAtLeast: size)
        }
    }

    /// The usable size of a live block (`malloc_usable_size`).
    public static func usableSize(of pointer: UnsafeMutableRawPointer) -> Int {
        malloc_usable_size(pointer)
    }

    /// jemalloc's version string, e.g. `5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c`.
    public static func version() -> String {
        readString("version") ?? "unknown"
    }

    /// The `opt.*` settings (and arena count) that shape the figures, as name/value pairs, sorted by name.
    public static func settings() -> [String: String] {
        var result: [String: String] = [:]
        for name in ["opt.dirty_decay_ms", "opt.muzzy_decay_ms"] {
            var value = 0
            var length = MemoryLayout<Int>.size
            if mallctl(name, &value, &length, nil, 0) == 0 { result[name] = String(value) }
        }
        for name in ["opt.background_thread", "opt.tcache", "opt.retain", "background_thread"] {
            var value = false
            var length = MemoryLayout<Bool>.size
            if mallctl(name, &value, &length, nil, 0) == 0 { result[name] = String(value) }
        }
        for name in ["opt.narenas", "arenas.narenas"] {
            var value: UInt32 = 0
            var length = MemoryLayout<UInt32>.size
            if mallctl(name, &value, &length, nil, 0) == 0 { result[name] = String(value) }
        }
        for name in ["opt.tcache_max", "opt.lg_extent_max_active_fit"] {
            var value = 0
            var length = MemoryLayout<Int>.size
            if mallctl(name, &value, &length, nil, 0) == 0 { result[name] = String(value) }
        }
        for name in ["opt.thp", "opt.metadata_thp", "opt.percpu_arena"] {
            if let value = readString(name) { result[name] = value }
        }
        return result
    }

    private static func readString(_ name: String) -> String? {
        var pointer: UnsafePointer<CChar>? = nil
        var length = MemoryLayout<UnsafePointer<CChar>?>.size
        guard mallctl(name, &pointer, &length, nil, 0) == 0, let pointer else { return nil }
        return String(cString: pointer)
    }
}
