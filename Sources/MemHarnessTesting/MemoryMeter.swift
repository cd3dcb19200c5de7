import AllocatorProbe
import CJemalloc
import HarnessModel
import Measurement
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// Measures a closure in this process: a settle, the start, a sampler on `stats.allocated`, the runs (each
/// followed by a settle and a live-heap reading when there are several), a settle, the residue and the
/// survivors of tracked objects. The same sequence as a harness case (`CaseExecutor`), minus the workload.
///
/// The figures are process-wide: honest only while nothing else in the process allocates, which is why
/// expectations measure in a replica process by default (see `ReplicaLauncher`).
final class MemoryMeter {
    /// The figures, and the closure's error when it threw (the runs stop there).
    typealias Measured = (figures: MemoryFigures, closureError: (any Error)?)

    let context = MemoryContext()
    private let probe: JemallocProbe
    private let options: MemoryMeasuring
    private let iterations: Int
    private let sampler: Sampler
    private var liveBytesAfterRun: [Int] = []
    private var baselineBytes = 0
    private var threadCacheAtBaselineBytes = 0
    private var startNanoseconds: Int64 = 0
    private var endNanoseconds: Int64 = 0
    private var threadStart: ThreadCounters.Reading?
    private var threadEnd: ThreadCounters.Reading?
    /// The thread the closure started on: its counters describe the closure only if it also ends there.
    private var startThread = pthread_self()

    /// Everything the measurement needs is made here, before the start is read, so none of it counts.
    init(options: MemoryMeasuring, iterations: Int) throws(MemoryTestingError) {
        probe = try Self.verifiedProbe()
        self.options = options
        self.iterations = iterations
        do {
            sampler = try Sampler(
                probe: probe, interval: options.samplingInterval, gauges: [], phaseNames: ["closure"],
                phaseIndex: { 0 })
        } catch {
            throw .measurement(error.description)
        }
        liveBytesAfterRun.reserveCapacity(iterations)
    }

    /// Measures `body`, run `iterations` times on the calling thread; the closure's error ends the runs.
    func measure(_ body: (MemoryContext) throws -> Void) throws(MemoryTestingError) -> Measured {
        settle()
        try start()
        var failure: (any Error)?
        for run in 1...iterations {
            context.enterRun(run)
            do {
                try body(context)
            } catch {
                failure = error
                break
            }
            if iterations > 1 {
                settle()
                liveBytesAfterRun.append(liveHeapBytes())
            }
        }
        threadEnd = ThreadCounters.read()
        endNanoseconds = MonotonicClock.nanoseconds()
        sampler.finish()
        settle()
        return (finish(), failure)
    }

    /// Measures `body`, awaited `iterations` times; the settles sleep without holding a thread. The thread's
    /// exact peak is used only when the closure ends on the thread it started on.
    nonisolated(nonsending) func measureAsync(_ body: (MemoryContext) async throws -> Void)
        async
        throws(MemoryTestingError) -> Measured
    {
        await settleAsync()
        try start()
        var failure: (any Error)?
        for run in 1...iterations {
            context.enterRun(run)
            do {
                try await body(context)
            } catch {
                failure = error
                break
            }
            if iterations > 1 {
                await settleAsync()
                liveBytesAfterRun.append(liveHeapBytes())
            }
        }
        // An async closure may resume on another thread: the counters of the one it started on then
        // describe part of it only, and are left out.
        if pthread_equal(pthread_self(), startThread) != 0 { threadEnd = ThreadCounters.read() }
        endNanoseconds = MonotonicClock.nanoseconds()
        sampler.finish()
        await settleAsync()
        return (finish(), failure)
    }

    /// The start is the live heap, as the sampler reads it: freed blocks other threads keep in their caches
    /// (an async closure's pool threads among them) are not the closure's, and may be flushed while it runs.
    private func start() throws(MemoryTestingError) {
        let heap = probe.readAllocator()
        baselineBytes = heap.liveBytes
        threadCacheAtBaselineBytes = heap.threadCacheBytes
        sampler.setBaseline(allocatedBytes: baselineBytes)
        startThread = pthread_self()
        threadStart = ThreadCounters.restartPeak()
        startNanoseconds = MonotonicClock.nanoseconds()
        do {
            try sampler.start(originNanoseconds: startNanoseconds)
        } catch {
            throw .measurement(error.description)
        }
    }

    /// Survivors first (they are read after the settle), then the tracker's side tables go, then the residue.
    private func finish() -> MemoryFigures {
        let tracked = context.lifetimes.tracked()
        let survivors = context.lifetimes.survivors()
        context.lifetimes.removeAll()
        probe.flushThreadCache()
        let heap = probe.readAllocator()
        let residue = heap.liveBytes - baselineBytes
        let threadCacheAtEnd = heap.threadCacheBytes
        let output = sampler.collect()
        // The sampler's peak is the live heap too (`AllocatorStatsValues`), so the two subtract.
        let sampledPeak = max(0, output.peak.allocatedBytes - baselineBytes)
        let threadPeak = trustedThreadPeak(liveChangeBytes: residue)
        let growth =
            liveBytesAfterRun.isEmpty
            ? [] : [GrowthSeries(phase: "runs", warmupIterations: 1, liveBytesAfterIteration: liveBytesAfterRun)]
        return MemoryFigures(
            peakBytes: max(sampledPeak, threadPeak ?? 0), sampledPeakBytes: sampledPeak, threadPeakBytes: threadPeak,
            residueBytes: residue, baselineAllocatedBytes: baselineBytes,
            leaks: LeakMeasurements(
                tracked: tracked, survivors: survivors, growth: growth,
                threadCacheBytesAtBaseline: threadCacheAtBaselineBytes, threadCacheBytesAtEnd: threadCacheAtEnd),
            iterations: iterations, sampling: output.figures, durationNanoseconds: endNanoseconds - startNanoseconds,
            settleNanoseconds: options.settle.nanoseconds, isolation: .thisProcess)
    }

    /// The closure's thread's peak, unless its blocks were freed on other threads.
    ///
    /// The thread's net bytes (allocated minus freed on it) only describe the heap when other threads did
    /// not free what it allocated: a producer handing items to a consumer queue nets everything it ever
    /// allocated. When the thread's net over the closure exceeds the live heap's change by more than the
    /// counter's 64 KiB accuracy (with room to spare), its peak is not used.
    private func trustedThreadPeak(liveChangeBytes: Int) -> Int? {
        guard let threadStart, let threadEnd, let peak = threadEnd.peakBytes else { return nil }
        let net = threadEnd.netBytes - threadStart.netBytes
        return net <= liveChangeBytes + 256 << 10 ? peak : nil
    }

    /// `stats.allocated` minus the freed regions held in thread caches, from one snapshot, bytes.
    private func liveHeapBytes() -> Int {
        let allocated = probe.allocatedBytes()
        return allocated - probe.threadCacheBytes()
    }

    private func settle() {
        settleStep()
        MonotonicClock.sleep(for: options.settle)
        settleStep()
    }

    private nonisolated(nonsending) func settleAsync() async {
        settleStep()
        // Cancellation only shortens the settle: the figures are read either way.
        try? await Task.sleep(for: options.settle)
        settleStep()
    }

    /// This thread's cache back to the arenas, every arena's dirty pages to the kernel.
    private func settleStep() {
        probe.flushThreadCache()
        probe.purgeAllArenas()
    }

    /// Set once jemalloc was seen serving this process's allocations (the check allocates 1 MiB).
    private static let allocatorVerified = Mutex(false)

    /// A probe, after checking (once per process) that jemalloc is the process allocator.
    static func verifiedProbe() throws(MemoryTestingError) -> JemallocProbe {
        let probe: JemallocProbe
        do {
            probe = try JemallocProbe()
        } catch {
            throw .allocator(error)
        }
        guard !allocatorVerified.withLock({ $0 }) else { return probe }
        do {
            try verifyServesThisThread(probe)
        } catch {
            throw .allocator(error)
        }
        allocatorVerified.withLock { $0 = true }
        return probe
    }

    /// Where the check's block is published, so the optimizer cannot drop its malloc/free pair as unobserved.
    private static let checkSink = Atomic<UInt>(0)

    /// Checks that jemalloc serves this thread's `malloc`: a 1 MiB block must move this thread's own
    /// `thread.allocated` by at least its size. The thread's counter, not the process-wide `stats.allocated`:
    /// tests run in parallel in a test process, and their frees meanwhile once made a 1 MiB block look like
    /// 37 KiB to the process-wide check.
    static func verifyServesThisThread(_ probe: JemallocProbe) throws(AllocatorProbeError) {
        let size = 1 << 20
        guard let before = probe.threadAllocatedBytes() else {
            // No per-thread counter (jemalloc built without stats): the process-wide check is all there is.
            try probe.verifyIsProcessAllocator()
            return
        }
        guard let block = malloc(size) else { throw .notProcessAllocator(movedBytes: 0, expectedAtLeast: size) }
        memset(block, 1, size)
        checkSink.store(UInt(bitPattern: block), ordering: .relaxed)
        let after = probe.threadAllocatedBytes() ?? before
        free(block)
        // `thread.allocated` only grows; a malloc that is not jemalloc's leaves it where it was.
        let moved = Int(truncatingIfNeeded: after &- before)
        guard moved >= size else { throw .notProcessAllocator(movedBytes: moved, expectedAtLeast: size) }
    }
}

/// jemalloc's counters of the calling thread: bytes allocated and freed on it, and its high-water mark.
enum ThreadCounters {
    /// One reading of the calling thread's counters.
    struct Reading {
        /// `thread.allocated - thread.deallocated`, bytes (both count size-class bytes, monotonic).
        var netBytes: Int
        /// `thread.peak.read`: the highest net since the last reset (updated every 64 KiB of traffic and at
        /// the read), bytes; nil when this jemalloc lacks it (before 5.3).
        var peakBytes: Int?
    }

    /// Restarts the calling thread's peak at its net now, and reads the counters.
    static func restartPeak() -> Reading? {
        let restarted = mallctl("thread.peak.reset", nil, nil, nil, 0) == 0
        guard var reading = read() else { return nil }
        // Not restarted, the high-water mark is the thread's since it began, not the closure's: no peak then.
        if !restarted { reading.peakBytes = nil }
        return reading
    }

    /// The calling thread's counters; nil when jemalloc lacks them.
    static func read() -> Reading? {
        guard let allocated = value("thread.allocated"), let deallocated = value("thread.deallocated") else {
            return nil
        }
        return Reading(
            netBytes: Int(truncatingIfNeeded: allocated &- deallocated),
            peakBytes: value("thread.peak.read").map(Int.init))
    }

    private static func value(_ name: String) -> UInt64? {
        var value: UInt64 = 0
        var length = MemoryLayout<UInt64>.size
        return mallctl(name, &value, &length, nil, 0) == 0 ? value : nil
    }
}
