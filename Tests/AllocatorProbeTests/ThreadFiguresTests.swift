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
        _ = probe.allocatedBytes()
        let flushed = probe.threadCacheBytes()
        let blocks = (0..<64).compactMap { _ in malloc(1000) }
        #expect(blocks.count == 64)
        for block in blocks { free(block) }
        _ = probe.allocatedBytes()
        let cached = probe.threadCacheBytes()
        // 64 freed 1 KiB regions go to this thread's cache (jemalloc keeps at most a bin's worth).
        #expect(cached - flushed >= 16 * 1024)
        probe.flushThreadCache()
        _ = probe.allocatedBytes()
        #expect(probe.threadCacheBytes() < cached - 16 * 1024)
    }
}
