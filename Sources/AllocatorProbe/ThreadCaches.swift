import CJemalloc

extension JemallocProbe {
    /// Bytes of freed regions sitting in every thread's cache, as of the last `epoch` refresh.
    ///
    /// jemalloc counts these regions in `stats.allocated` although the application freed them,
    /// so `allocatedBytes() - threadCacheBytes()` is the live heap. Call it right after
    /// `allocatedBytes()` (which refreshes): both figures then come from the same snapshot.
    /// Reads `stats.arenas.<MALLCTL_ARENAS_ALL>.tcache_bytes`; returns 0 when this jemalloc
    /// lacks the figure. Allocation-free.
    public func threadCacheBytes() -> Int {
        var value = 0
        var length = MemoryLayout<Int>.size
        // 4096 is MALLCTL_ARENAS_ALL in jemalloc 5: the merged figures of every arena.
        let status = mallctl("stats.arenas.4096.tcache_bytes", &value, &length, nil, 0)
        return status == 0 ? value : 0
    }
}
