import CJemalloc
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where the start-up check publishes its block, so its allocation cannot be optimized away.
private let allocationSink = Atomic<UInt>(0)

/// Reads jemalloc's statistics through `mallctlbymib` with MIBs resolved once.
///
/// `read()` writes `epoch` (without it `stats.*` never move) and then reads six figures; it
/// allocates nothing, so the sampler can call it on its hot path.
public final class JemallocProbe: MemoryProbe, @unchecked Sendable {
    // Safety: after init the MIB storage is only read; mallctlbymib is thread-safe.
    private static let statNames = [
        "stats.allocated", "stats.active", "stats.resident",
        "stats.mapped", "stats.retained", "stats.metadata",
    ]
    private static let mibCapacity = 8

    /// MIBs: slot 0 is `epoch`, slots 1...6 the stats, slot 7 `thread.allocated`.
    private let mibs: UnsafeMutablePointer<Int>
    private let mibLengths: UnsafeMutablePointer<Int>
    private let slotCount = 8
    private let rss: ResidentSetReader

    /// Resolves every MIB; throws when this jemalloc lacks statistics.
    public init() throws(AllocatorProbeError) {
        mibs = .allocate(capacity: slotCount * Self.mibCapacity)
        mibs.initialize(repeating: 0, count: slotCount * Self.mibCapacity)
        mibLengths = .allocate(capacity: slotCount)
        mibLengths.initialize(repeating: Self.mibCapacity, count: slotCount)
        rss = ResidentSetReader()
        let names = ["epoch"] + Self.statNames + ["thread.allocated"]
        for (slot, name) in names.enumerated() {
            var length = Self.mibCapacity
            let status = mallctlnametomib(name, mibs + slot * Self.mibCapacity, &length)
            guard status == 0 else {
                mibs.deallocate()
                mibLengths.deallocate()
                throw AllocatorProbeError.mallctlFailed(name: name, errno: status)
            }
            mibLengths[slot] = length
        }
    }

    deinit {
        mibs.deallocate()
        mibLengths.deallocate()
    }

    /// Makes `stats.*` current (writes `epoch`).
    @inline(__always)
    public func refresh() {
        var epoch: UInt64 = 1
        _ = mallctlbymib(mibs, mibLengths[0], nil, nil, &epoch, MemoryLayout<UInt64>.size)
    }

    @inline(__always)
    private func readSize(slot: Int) -> Int {
        var value = 0
        var length = MemoryLayout<Int>.size
        _ = mallctlbymib(mibs + slot * Self.mibCapacity, mibLengths[slot], &value, &length, nil, 0)
        return value
    }

    /// Refreshes and reads the six figures. Allocation-free.
    public func readAllocator() -> AllocatorStats {
        refresh()
        return AllocatorStats(
            allocatedBytes: readSize(slot: 1), activeBytes: readSize(slot: 2),
            residentBytes: readSize(slot: 3), mappedBytes: readSize(slot: 4),
            retainedBytes: readSize(slot: 5), metadataBytes: readSize(slot: 6)
        )
    }

    /// Refreshes and reads only `stats.allocated`, in bytes. Allocation-free.
    public func allocatedBytes() -> Int {
        refresh()
        return readSize(slot: 1)
    }

    /// jemalloc's figures plus the kernel's current RSS. Allocation-free.
    public func read() -> MemoryReading {
        MemoryReading(allocator: readAllocator(), rssBytes: rss.currentBytes())
    }

    /// Bytes allocated so far by the calling thread (`thread.allocated`, monotonic).
    public func threadAllocatedBytes() -> UInt64? {
        var value: UInt64 = 0
        var length = MemoryLayout<UInt64>.size
        let status = mallctlbymib(mibs + 7 * Self.mibCapacity, mibLengths[7], &value, &length, nil, 0)
        return status == 0 ? value : nil
    }

    /// Returns the calling thread's cached regions to their arenas (`thread.tcache.flush`).
    ///
    /// Only the calling thread's cache: other threads' caches still count as allocated.
    public func flushThreadCache() {
        _ = mallctl("thread.tcache.flush", nil, nil, nil, 0)
    }

    /// Returns every arena's unused dirty pages to the kernel at once (`arena.<ALL>.purge`),
    /// so `stats.resident` no longer lags frees by the decay time.
    public func purgeAllArenas() {
        _ = mallctl("arena.\(MALLCTL_ARENAS_ALL).purge", nil, nil, nil, 0)
    }

    /// Checks that jemalloc serves this process's mallocs: a 1 MiB allocation must move `stats.allocated`.
    public func verifyIsProcessAllocator() throws(AllocatorProbeError) {
        let size = 1 << 20
        let before = allocatedBytes()
        guard let block = malloc(size) else {
            throw AllocatorProbeError.notProcessAllocator(movedBytes: 0, expectedAtLeast: size)
        }
        memset(block, 1, size)
        // Publish the block so the optimizer cannot drop the malloc/free pair as unobserved.
        allocationSink.store(UInt(bitPattern: block), ordering: .relaxed)
        let after = allocatedBytes()
        free(block)
        // Other threads may free meanwhile; a half-size threshold still tells "counted" from "not counted".
        if after - before < size / 2 {
            throw AllocatorProbeError.notProcessAllocator(movedBytes: after - before, expectedAtLeast: size)
        }
    }

    /// The size-class bytes jemalloc would use for a request of `size` bytes (`nallocx`).
    public static func sizeClassBytes(for size: Int) -> Int {
        nallocx(size, 0)
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
