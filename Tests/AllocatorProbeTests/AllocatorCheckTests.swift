import AllocatorProbe
import Foundation
import Synchronization
import Testing

#if os(Linux)
    import Glibc
#endif

/// The check that jemalloc serves the process (`verifyIsProcessAllocator`), which a memory expectation runs
/// before its first measurement in a test process: other tests allocate and free beside it, and it must neither
/// fail because of them nor pass without jemalloc.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct AllocatorCheckTests {
    @Test func anotherThreadFreeingMeanwhileDoesNotFailTheCheck() throws {
        let probe = try JemallocProbe()
        // The probe sees a known block on this thread: the counter the check reads moves with it.
        let before = try #require(probe.threadAllocatedBytes())
        free(touched(malloc(1 << 20)))
        #expect(try #require(probe.threadAllocatedBytes()) - before >= 1 << 20)

        // Another thread allocates and frees 16 MiB blocks as fast as it can, each free dropping the
        // process-wide figure by 16 MiB; the check runs 5,000 times meanwhile, from the other thread's first
        // block on (the process-wide check fails here).
        let churning = Churning()
        let churner = Thread {
            while churning.on.load(ordering: .relaxed) {
                let block = malloc(16 << 20)
                churning.sink.store(UInt(bitPattern: block), ordering: .relaxed)
                free(block)
                churning.rounds.add(1, ordering: .relaxed)
            }
        }
        churner.start()
        defer { churning.on.store(false, ordering: .relaxed) }
        // Bounded: 10 s for a thread to free its first block.
        for _ in 0..<10_000 where churning.rounds.load(ordering: .relaxed) == 0 { usleep(1000) }
        try #require(churning.rounds.load(ordering: .relaxed) > 0, "the other thread never ran")
        var failures: [String] = []
        for _ in 0..<5000 {
            do {
                try probe.verifyIsProcessAllocator()
            } catch {
                failures.append(error.description)
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of 5,000 checks failed, e.g. \(failures.first ?? "")")
    }

    @Test func theThreadsHighWaterMarkSeesABlockFreedBeforeItIsRead() throws {
        let probe = try JemallocProbe()
        try #require(probe.resetThreadPeak(), "this jemalloc has no thread.peak (before 5.3)")
        let netBefore = try #require(probe.threadAllocatedBytes()) &- (try #require(probe.threadDeallocatedBytes()))
        free(touched(malloc(8 << 20)))
        let peak = try #require(probe.threadPeakBytes())
        let netAfter = try #require(probe.threadAllocatedBytes()) &- (try #require(probe.threadDeallocatedBytes()))
        // The thread's own counters: no other thread moves them. The mark is of the thread's net bytes since the
        // reset, which what the thread freed between the reset and the block (a few hundred bytes) lowers.
        #expect(peak >= (8 << 20) - (64 << 10), "peak \(peak) B")
        let netChange = Int(truncatingIfNeeded: netAfter &- netBefore)
        #expect(abs(netChange) < 1 << 20, "the block was freed: the net is back near where it was")
    }
}

/// Whether the other thread goes on allocating.
private final class Churning: Sendable {
    let on = Atomic<Bool>(true)
    let rounds = Atomic<Int>(0)
    /// Where its blocks are published, so the optimizer cannot drop a malloc/free pair as unobserved.
    let sink = Atomic<UInt>(0)
}

/// `block` with every byte written (so its pages are resident); nil when the allocation failed.
private func touched(_ block: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let block else { return nil }
    memset(block, 1, JemallocProbe.usableSize(of: block))
    return block
}
