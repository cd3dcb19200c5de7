import AllocatorProbe
import HarnessModel
import Measurement
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// Measures a closure in this process through the case sequence of a harness case (`CaseSequence`): a settle,
/// the baseline, the sampler, the runs in one phase (each followed by a settle and a live-heap reading when there
/// are several), a settle, the survivors of tracked objects and the residue. The closure is the workload.
///
/// The figures are process-wide: honest only while nothing else in the process allocates, which is why
/// expectations measure in a replica process by default (see `ReplicaLauncher`).
final class MemoryMeter {
    /// The figures, and the closure's error when it threw (the runs stop there).
    typealias Measured = (figures: MemoryFigures, closureError: (any Error)?)

    /// The one phase: the closure's runs.
    static let phase = "runs"

    let context = MemoryContext()
    private let sequence: CaseSequence
    private let options: MemoryMeasuring
    private let iterations: Int
    /// True: the heap is captured before the closure and after it (`leaks: .none` with the agent tracking blocks).
    private let heapGraph: Bool
    private var unreachableBefore: UnreachableBlocks?
    private var liveBytesAfterRun: [Int] = []
    private var threadStart: ThreadCounters?
    private var threadEnd: ThreadCounters?
    /// The thread the closure started on: its counters describe the closure only if it also ends there.
    private var startThread = pthread_self()

    /// Everything the measurement needs is made here, before the baseline is read, so none of it counts.
    init(options: MemoryMeasuring, iterations: Int, heapGraph: Bool = false) throws(MemoryTestingError) {
        let probe = try Self.verifiedProbe()
        self.options = options
        self.iterations = iterations
        self.heapGraph = heapGraph
        do {
            sequence = try CaseSequence(probe: probe, phaseNames: [Self.phase], settle: options.settle) {
                phaseIndex throws(MeasurementError) in
                try Sampler(
                    probe: probe, interval: options.samplingInterval, gauges: [], phaseNames: [Self.phase],
                    phaseIndex: phaseIndex)
            }
            try sequence.prepare()
        } catch {
            throw .measurement(error)
        }
        liveBytesAfterRun.reserveCapacity(iterations)
    }

    /// Measures `body`, run `iterations` times on the calling thread; the closure's error ends the runs.
    func measure(_ body: (MemoryContext) throws -> Void) throws(MemoryTestingError) -> Measured {
        captureBefore()
        sequence.settle()
        try start()
        var failure: (any Error)?
        for run in 1...iterations {
            context.enterRun(run)
            let mark = sequence.beginWorkloadCall()
            do {
                try body(context)
            } catch {
                failure = error
            }
            sequence.endWorkloadCall(mark)
            if failure != nil { break }
            if iterations > 1 {
                sequence.settle()
                liveBytesAfterRun.append(sequence.probe.liveBytes())
            }
        }
        threadEnd = ThreadCounters(sequence.probe)
        stop()
        sequence.settle()
        let figures = finish()
        // The closure's calls ran below this frame and returned: their words must not be in the capture path's frames.
        if heapGraph { Agent.clearDeadStack() }
        return (withHeapGraph(figures), failure)
    }

    /// Measures `body`, awaited `iterations` times; the settles sleep without holding a thread. The thread's
    /// exact peak is used only when the closure ends on the thread it started on.
    nonisolated(nonsending) func measureAsync(_ body: (MemoryContext) async throws -> Void)
        async
        throws(MemoryTestingError) -> Measured
    {
        captureBefore()
        await sequence.settleAsync()
        try start()
        var failure: (any Error)?
        for run in 1...iterations {
            context.enterRun(run)
            let mark = sequence.beginWorkloadCall()
            do {
                try await body(context)
            } catch {
                failure = error
            }
            sequence.endWorkloadCall(mark)
            if failure != nil { break }
            if iterations > 1 {
                await sequence.settleAsync()
                liveBytesAfterRun.append(sequence.probe.liveBytes())
            }
        }
        // An async closure may resume on another thread: the counters of the one it started on then
        // describe part of it only, and are left out.
        if pthread_equal(pthread_self(), startThread) != 0 { threadEnd = ThreadCounters(sequence.probe) }
        stop()
        await sequence.settleAsync()
        let figures = finish()
        if heapGraph { Agent.clearDeadStack() }
        return (withHeapGraph(figures), failure)
    }

    /// The baseline (the live heap, as the sampler reads it: freed blocks other threads keep in their caches,
    /// an async closure's pool threads among them, are not the closure's), the thread's peak restarted, the
    /// sampler started, the phase entered.
    private func start() throws(MemoryTestingError) {
        sequence.takeBaseline()
        startThread = pthread_self()
        threadStart = ThreadCounters(sequence.probe, restartingPeak: true)
        do {
            try sequence.startSampling()
        } catch {
            sequence.stop()  // the sampler's thread waits for a start or a stop: it ends here
            throw .measurement(error)
        }
        sequence.enterPhase(0)
    }

    private func stop() {
        sequence.enterPhase(1)
        sequence.stop()
    }

    /// Survivors first (they are read after the settle), then the tracker's side tables go, then the residue.
    private func finish() -> MemoryFigures {
        let growth =
            (liveBytesAfterRun.isEmpty
                ? []
                : [GrowthSeries(phase: Self.phase, warmupIterations: 1, liveBytesAfterIteration: liveBytesAfterRun)])
            + context.repeatGrowth.withLock { $0 }
        let residue = sequence.residue(tracked: context.lifetimes, growth: growth)
        let measurements = sequence.measurements(residue: residue)
        let sampledPeak = max(0, measurements.peakAllocatedNetBytes)
        let threadPeak = trustedThreadPeak(liveChangeBytes: residue.residueBytes)
        return MemoryFigures(
            peakBytes: max(sampledPeak, threadPeak ?? 0), sampledPeakBytes: sampledPeak, threadPeakBytes: threadPeak,
            residueBytes: residue.residueBytes, baselineAllocatedBytes: measurements.baselineAllocatedBytes,
            leaks: residue.leaks, iterations: iterations, sampling: measurements.sampling,
            durationNanoseconds: measurements.durationNanoseconds, settleNanoseconds: options.settle.nanoseconds,
            isolation: .thisProcess)
    }

    /// Before the settle that precedes the baseline: what the capture allocates is gone before the start is read.
    private func captureBefore() {
        guard heapGraph else { return }
        Agent.clearDeadStack()
        unreachableBefore = HeapGraphCheck.capture(label: "before the closure").summary.map(UnreachableBlocks.init)
    }

    /// The figures with the heap graph after the closure (taken after every figure was read: it allocates).
    private func withHeapGraph(_ figures: MemoryFigures) -> MemoryFigures {
        guard heapGraph else { return figures }
        var figures = figures
        let (after, failure) = HeapGraphCheck.capture(label: "after the closure")
        if let after, let before = unreachableBefore {
            figures.heapGraph = HeapGraphLeaks(capture: after, before: before)
        } else {
            figures.heapGraphUnavailable =
                "the heap capture failed: \(failure ?? "the capture before the closure failed")"
        }
        return figures
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

    /// Set once jemalloc was seen serving this process's allocations (the check allocates 1 MiB).
    private static let allocatorVerified = Mutex(false)

    /// A probe, after checking (once per process) that jemalloc is the process allocator.
    static func verifiedProbe() throws(MemoryTestingError) -> JemallocProbe {
        do {
            let probe = try JemallocProbe()
            guard !allocatorVerified.withLock({ $0 }) else { return probe }
            try probe.verifyIsProcessAllocator()
            allocatorVerified.withLock { $0 = true }
            return probe
        } catch {
            throw .allocator(error)
        }
    }
}

/// The calling thread's counters, read through the probe: bytes allocated minus freed on it, and its high-water mark.
struct ThreadCounters {
    /// `thread.allocated - thread.deallocated`, bytes (both count size-class bytes, monotonic).
    var netBytes: Int
    /// The thread's highest net since its peak was restarted (`JemallocProbe.threadPeakBytes()`), bytes; nil when
    /// this jemalloc lacks it, or when it could not be restarted (it would be the thread's since it began).
    var peakBytes: Int?

    /// Reads the calling thread's counters, restarting its peak first when `restartingPeak`; nil when jemalloc
    /// lacks them.
    init?(_ probe: JemallocProbe, restartingPeak: Bool = false) {
        let restarted = restartingPeak ? probe.resetThreadPeak() : true
        guard let allocated = probe.threadAllocatedBytes(), let deallocated = probe.threadDeallocatedBytes() else {
            return nil
        }
        netBytes = Int(truncatingIfNeeded: allocated &- deallocated)
        peakBytes = restarted ? probe.threadPeakBytes().map(Int.init) : nil
    }
}
