import AllocatorProbe
import Foundation
import Synchronization
import Testing
import WorkloadKit

#if canImport(Glibc)
    import Glibc
#endif

/// These tests touch process-wide allocator state, so they run one at a time.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct JemallocProbeTests {
    @Test func jemallocIsTheProcessAllocator() throws {
        let probe = try JemallocProbe()
        try probe.verifyIsProcessAllocator()
    }

    @Test func allocatedMovesBySizeClassBytesOfALiveBlock() throws {
        let probe = try JemallocProbe()
        let size = 8 << 20
        // This thread's counters see the block, and nothing of other threads: the block plus the few small blocks
        // this thread makes meanwhile (the test's own bookkeeping, about 2 KiB here).
        let allocatedBefore = try #require(probe.threadAllocatedBytes())
        let deallocatedBefore = try #require(probe.threadDeallocatedBytes())
        let block = try #require(malloc(size))
        memset(block, 1, size)
        let usable = JemallocProbe.usableSize(of: block)
        let allocatedDuring = try #require(probe.threadAllocatedBytes())
        free(block)
        let deallocatedAfter = try #require(probe.threadDeallocatedBytes())
        #expect(usable == AllocatorCost.bytes(forRequest: size))
        let small = UInt64(64 << 10)
        #expect((UInt64(usable)..<UInt64(usable) + small).contains(allocatedDuring - allocatedBefore))
        #expect((UInt64(usable)..<UInt64(usable) + small).contains(deallocatedAfter - deallocatedBefore))
        // The process-wide figure moves by the block too, give or take what the test runner's other threads allocate
        // meanwhile: such noise lands in one try now and then, never in all five, so the closest try is within 1%.
        var deviations: [Int] = []
        for _ in 0..<5 {
            let before = probe.allocatedBytes()
            guard let block = malloc(size) else { break }
            memset(block, 1, size)
            let during = probe.allocatedBytes()
            free(block)
            deviations.append(abs((during - before) - usable))
        }
        #expect(try #require(deviations.min()) < usable / 100, "\(deviations)")
    }

    @Test func readingAllFiguresIsConsistent() throws {
        let probe = try JemallocProbe()
        let reading = probe.read()
        let stats = reading.allocator
        #expect(stats.allocatedBytes > 0)
        #expect(stats.activeBytes >= stats.allocatedBytes)
        #expect(stats.residentBytes >= stats.activeBytes)
        #expect(stats.mappedBytes >= stats.activeBytes)
        #expect(stats.metadataBytes > 0)
        #expect(reading.rssBytes > 0)
    }

    @Test func purgeReturnsFreedPagesAtOnce() throws {
        let probe = try JemallocProbe()
        let size = 64 << 20
        let block = try #require(malloc(size))
        memset(block, 1, size)
        let holding = probe.readAllocator().residentBytes
        free(block)
        probe.flushThreadCache()
        probe.purgeAllArenas()
        let purged = probe.readAllocator().residentBytes
        #expect(holding - purged > size / 2, "resident fell by \(holding - purged) bytes")
    }

    /// The cache calls report what jemalloc answered: a thread with a cache flushes it; once the cache is off
    /// there is nothing to flush, and jemalloc says so. On a thread of its own: the cache stays off there.
    @Test func cacheCallsReportWhatJemallocAnswered() throws {
        let probe = try JemallocProbe()
        let answers = Mutex<[Bool]>([])
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let block = malloc(64)  // gives the thread's cache something to hold
            free(block)
            let flushed = probe.flushThreadCache()
            let disabled = probe.disableThreadCache()
            let flushedWithout = probe.flushThreadCache()
            answers.withLock { $0 = [flushed, disabled, flushedWithout] }
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 30) == .success, "the thread did not finish within 30 s")
        #expect(answers.withLock { $0 } == [true, true, false])
        #expect(probe.purgeAllArenas())
    }

    @Test func threadAllocatedCountsThisThreadsAllocations() throws {
        let probe = try JemallocProbe()
        let before = try #require(probe.threadAllocatedBytes())
        let block = try #require(malloc(1 << 20))
        let after = try #require(probe.threadAllocatedBytes())
        free(block)
        #expect(after - before >= 1 << 20)
    }

    @Test func versionAndSettingsAreRecorded() {
        #expect(JemallocProbe.version().hasPrefix("5."))
        let settings = JemallocProbe.settings()
        #expect(settings["opt.dirty_decay_ms"] != nil)
        #expect(settings["opt.tcache"] != nil)
        #expect(settings["opt.narenas"] != nil)
    }
}

@Suite(.serialized)
struct KernelMemoryTests {
    @Test func statusReportsRSSAndItsPeak() throws {
        let status = try KernelMemory.status()
        #expect(status.rssBytes > 0)
        #expect(status.peakRSSBytes >= status.rssBytes)
    }

    @Test func resettingThePeakForgetsAnEarlierHighWaterMark() throws {
        let probe = try JemallocProbe()
        let size = 128 << 20
        let block = try #require(malloc(size))
        memset(block, 1, size)
        let highWater = try KernelMemory.status().peakRSSBytes
        free(block)
        probe.flushThreadCache()
        probe.purgeAllArenas()
        try KernelMemory.resetPeakRSS()
        let afterReset = try KernelMemory.status()
        #expect(
            highWater - afterReset.peakRSSBytes > size / 2, "peak went from \(highWater) to \(afterReset.peakRSSBytes)")
    }
}
