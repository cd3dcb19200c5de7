import AllocatorProbe
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Thread caches are process-wide allocator state: one test at a time.
@Suite(.serialized)
struct ThreadFiguresTests {
    @Test func freedSmallBlocksSitInTheThreadCacheUntilFlushed() throws {
        let probe = try JemallocProbe()
        probe.flushThreadCache()
        let flushed = probe.threadCacheBytes()
        let blocks = (0..<64).compactMap { _ in malloc(1000) }
        #expect(blocks.count == 64)
        for block in blocks { free(block) }
        let cached = probe.threadCacheBytes()
        // 64 freed 1 KiB regions go to this thread's cache (jemalloc keeps at most a bin's worth).
        #expect(cached - flushed >= 16 * 1024)
        probe.flushThreadCache()
        #expect(probe.threadCacheBytes() < cached - 16 * 1024)
    }
}

/// The live heap leaves out what thread caches hold. Process-wide allocator state: one test at a time.
@Suite(.serialized)
struct LiveHeapTests {
    @Test func liveBytesLeaveOutFreedBlocksHeldInTheThreadCache() throws {
        let probe = try JemallocProbe()
        let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 64)
        defer { blocks.deallocate() }
        probe.flushThreadCache()
        let before = probe.readAllocator()
        for index in 0..<64 { blocks[index] = malloc(1000) }
        let holding = probe.readAllocator()
        // The probe sees the 64 live blocks (1,024-byte regions each).
        #expect(
            holding.liveBytes - before.liveBytes >= 60 * 1024, "live moved \(holding.liveBytes - before.liveBytes) B")
        for index in 0..<64 { free(blocks[index]) }
        let freed = probe.readAllocator()
        // stats.allocated still counts the blocks this thread's cache keeps; the live heap does not. How many of
        // the 64 it keeps is jemalloc's to decide (its incremental cache GC may flush part of the bin between two
        // frees: 15,744 B were kept once where 16 KiB usually are), so the bound is a few blocks, not a count.
        #expect(freed.threadCacheBytes - before.threadCacheBytes >= 4 * 1024)
        #expect(freed.allocatedBytes - before.allocatedBytes >= freed.threadCacheBytes - before.threadCacheBytes - 4096)
        #expect(
            abs(freed.liveBytes - before.liveBytes) < 4096,
            "live \(freed.liveBytes - before.liveBytes) B after the frees")
    }

    @Test func settlingAndReadingAllocateNothing() throws {
        let probe = try JemallocProbe()
        // The counter sees an allocation of this thread. (Plain reads around the calls: the test macros allocate.)
        let start = probe.threadAllocatedBytes() ?? 0
        let block = malloc(4096)
        let afterBlock = probe.threadAllocatedBytes() ?? 0
        free(block)
        #expect(afterBlock - start >= 4096)
        let before = probe.threadAllocatedBytes() ?? 0
        probe.flushThreadCache()
        probe.purgeAllArenas()
        _ = probe.read()
        _ = probe.liveBytes()
        _ = probe.threadCacheBytes()
        _ = probe.confirmedLiveBytes()
        _ = probe.confirmingReading()
        let after = probe.threadAllocatedBytes() ?? 0
        #expect(after == before, "settling and reading allocated \(after - before) B")
    }
}
