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
        let before = probe.allocatedBytes()
        let block = try #require(malloc(size))
        memset(block, 1, size)
        let during = probe.allocatedBytes()
        let usable = JemallocProbe.usableSize(of: block)
        free(block)
        let after = probe.allocatedBytes()
        #expect(usable == AllocatorCost.bytes(forRequest: size))
        // Other threads of the test runner may allocate meanwhile; a 1% band covers them.
        #expect(abs((during - before) - usable) < usable / 100)
        #expect(abs(after - before) < usable / 100)
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
