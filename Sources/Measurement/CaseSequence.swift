import AllocatorProbe
import HarnessModel
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// The case sequence: what every measured piece of work goes through in its process, from the baseline to the
/// residue. A harness case (`CaseExecutor`) and a memory expectation (`expectMemory`) both measure through it.
///
/// In order:
/// 1. `prepare()`: the sampler's thread is made, so what it costs is part of the baseline;
/// 2. `settle()` (or `settleAsync()`): the calling thread's cache flushed, every arena purged, a wait, again;
/// 3. `takeBaseline()`: the kernel's RSS high-water mark reset, the live heap read twice (the lower stands),
///    the exact marks restarted;
/// 4. `startSampling()`, then the work, in phases (`enterPhase`), its own calls booked with
///    `beginWorkloadCall()`/`endWorkloadCall(_:)` so that the rest counts as the harness's;
/// 5. `stop()`: the peaks end (exact peak, duration, CPU time, the harness's allocations), the sampler stops;
/// 6. `settle()` again, then `residue(tracked:growth:)`: the survivors of tracked objects, the live heap above
///    the baseline and its uncertainty;
/// 7. `measurements(residue:...)`: the case's figures, peaks from the samples and the phase boundaries (`Peaks`).
///
/// Everything the steps need is reserved when it is made: between the baseline and `stop()` the sequence
/// allocates nothing but what `enterPhase` books to the harness.
public final class CaseSequence {
    /// What the work starts from, read after the settle that precedes it.
    public struct Baseline: Sendable {
        /// The live heap (`stats.allocated` without thread caches), the lower of two readings, bytes.
        public var allocatedBytes = 0
        /// How far the two readings disagreed, bytes.
        public var spreadBytes = 0
        /// Freed bytes held in thread caches at the baseline.
        public var threadCacheBytes = 0
        var exactLiveBytes: Int?
        var exactCalls: Int?
        /// When the baseline was read, `MonotonicClock` nanoseconds: the origin of the samples' times.
        public var originNanoseconds: Int64 = 0
        var cpuNanoseconds: Int64 = 0
        /// False when the kernel refused to reset `VmHWM`: the sampled RSS peak stands in for it.
        var peakRSSReset = true
        /// `thread.allocated` of the calling thread when the baseline was read.
        var threadAllocatedBytes: UInt64 = 0
        /// The thread that read the baseline: the harness's own allocations are counted on it alone.
        var thread: pthread_t?
    }

    /// Where a call into the work began: the calling thread and its `thread.allocated`.
    public struct WorkloadCallMark: Sendable {
        let thread: pthread_t
        let threadAllocatedBytes: UInt64
    }

    /// What `stop()` read as the work ended.
    private struct End {
        var exactPeakLiveBytes: Int?
        var exactCalls: Int?
        var harnessAllocatedBytes: Int?
        var durationNanoseconds: Int64
        var cpuNanoseconds: Int64
    }

    /// The probe every reading goes through.
    public let probe: JemallocProbe
    /// The sampler; nil when sampling is off.
    let sampler: Sampler?
    /// How long each settle waits.
    public let settleDuration: Duration
    private let exact: Bool
    private var phases: PhaseRecorder
    /// The phase running now, for the sampler's rows.
    private let phaseCursor = PhaseCursor()
    /// What the work started from (after `takeBaseline()`).
    public private(set) var baseline = Baseline()
    /// Bytes the calling thread allocated inside the work's calls since the baseline; the rest is the harness's.
    private var workloadAllocatedBytes: UInt64 = 0
    private var end: End?

    /// A sequence over the phases `phaseNames`. `makeSampler` makes the sampler (nil: no sampling) with the
    /// function that tells it the phase running now; `exact` reads the agent's exact counts (`Agent`).
    public init(
        probe: JemallocProbe, phaseNames: [String], settle: Duration, exact: Bool = false,
        sampler makeSampler: (_ phaseIndex: @escaping @Sendable () -> Int) throws(MeasurementError) -> Sampler?
    ) throws(MeasurementError) {
        self.probe = probe
        settleDuration = settle
        self.exact = exact
        phases = PhaseRecorder(names: phaseNames, exact: exact)
        let cursor = phaseCursor
        sampler = try makeSampler { cursor.index.load(ordering: .relaxed) }
    }

    /// Makes the sampler's thread (see `Sampler.prepare()`).
    public func prepare() throws(MeasurementError) { try sampler?.prepare() }

    /// Flushes this thread's cache, purges every arena, waits `settleDuration`, and does both again.
    public func settle() { Self.settle(probe, nanoseconds: settleDuration.nanoseconds) }

    /// `settle()`, sleeping without holding a thread; cancellation only shortens the wait.
    public nonisolated(nonsending) func settleAsync() async {
        Self.settleStep(probe)
        try? await Task.sleep(for: settleDuration)
        Self.settleStep(probe)
    }

    /// Flushes this thread's cache, purges every arena, waits, and purges again.
    package static func settle(_ probe: JemallocProbe, nanoseconds: Int64) {
        settleStep(probe)
        MonotonicClock.sleep(for: .nanoseconds(nanoseconds))
        settleStep(probe)
    }

    private static func settleStep(_ probe: JemallocProbe) {
        probe.flushThreadCache()
        probe.purgeAllArenas()
    }

    /// Reads the baseline (call it right after a settle): resets the kernel's RSS high-water mark, reads the
    /// live heap twice, and restarts the exact marks. Allocates nothing.
    public func takeBaseline() {
        do {
            try KernelMemory.resetPeakRSS()
        } catch {
            // Some containers mount /proc read-only: VmHWM then covers the whole process, so the
            // sampled RSS peak is reported instead (see `measurements`).
            baseline.peakRSSReset = false
        }
        let heap = confirmedHeap()
        baseline.allocatedBytes = heap.stats.liveBytes
        baseline.spreadBytes = heap.spreadBytes
        baseline.threadCacheBytes = heap.stats.threadCacheBytes
        baseline.threadAllocatedBytes = probe.threadAllocatedBytes() ?? 0
        baseline.thread = pthread_self()
        sampler?.setBaseline(allocatedBytes: baseline.allocatedBytes)
        if exact {
            baseline.exactLiveBytes = Agent.liveBytes()
            baseline.exactCalls = Agent.allocationCalls()
            // The exact marks restart here; the overall one is read by `stop()`, each phase's when it ends.
            _ = Agent.takePeak()
            _ = Agent.takePhasePeak()
        }
        baseline.originNanoseconds = MonotonicClock.nanoseconds()
        baseline.cpuNanoseconds = Self.processCPUNanoseconds()
    }

    /// Starts sampling, with times relative to the baseline.
    public func startSampling() throws(MeasurementError) {
        try sampler?.start(originNanoseconds: baseline.originNanoseconds)
    }

    /// `prepare()`, `settle()`, `takeBaseline()`, `startSampling()`.
    public func start() throws(MeasurementError) {
        try prepare()
        settle()
        takeBaseline()
        try startSampling()
    }

    /// The allocator's figures read twice, back to back: the reading with the lower live heap, and how far
    /// the two live heaps disagreed (a thread cache filling or flushing while jemalloc summed them).
    func confirmedHeap() -> (stats: AllocatorStats, spreadBytes: Int) {
        let first = probe.readAllocator()
        let second = probe.readAllocator()
        return (first.liveBytes <= second.liveBytes ? first : second, abs(first.liveBytes - second.liveBytes))
    }

    /// The phases' names, by index.
    public var phaseNames: [String] { phases.names }

    /// Ends the current phase and enters phase `index` (`phaseNames.count` ends the last one), with the live
    /// heap read at the boundary (so a phase shorter than the sampling interval still has a peak).
    public func enterPhase(_ index: Int) {
        let heap = probe.confirmedLiveBytes()
        phases.enter(
            index, allocatedBytes: heap.bytes, spreadBytes: heap.spreadBytes,
            atNanoseconds: MonotonicClock.nanoseconds() - baseline.originNanoseconds)
        phaseCursor.index.store(index, ordering: .relaxed)
    }

    /// Marks the start of a call into the work; hand the mark to `endWorkloadCall(_:)`.
    public func beginWorkloadCall() -> WorkloadCallMark {
        WorkloadCallMark(thread: pthread_self(), threadAllocatedBytes: probe.threadAllocatedBytes() ?? 0)
    }

    /// Books what the calling thread allocated since `mark` to the work, not to the harness. A call that ended
    /// on another thread than it began (an awaited closure may) books nothing: the counters are per thread.
    public func endWorkloadCall(_ mark: WorkloadCallMark) {
        guard pthread_equal(mark.thread, pthread_self()) != 0 else { return }
        let now = probe.threadAllocatedBytes() ?? mark.threadAllocatedBytes
        workloadAllocatedBytes &+= now &- mark.threadAllocatedBytes
    }

    /// Bytes the baseline's thread allocated since the baseline outside the work's calls: the harness's own;
    /// nil when called on another thread (the counters are per thread).
    func harnessAllocatedBytes() -> Int? {
        guard let thread = baseline.thread, pthread_equal(thread, pthread_self()) != 0 else { return nil }
        let now = probe.threadAllocatedBytes() ?? baseline.threadAllocatedBytes
        return Int(truncatingIfNeeded: now &- baseline.threadAllocatedBytes &- workloadAllocatedBytes)
    }

    /// Ends the peaks: reads the exact peak, the duration, the CPU time and the harness's allocations, then
    /// stops the sampler's thread (the series is built later, by `measurements`: its arrays are not the work's).
    public func stop() {
        end = End(
            exactPeakLiveBytes: exact ? Agent.takePeak() : nil, exactCalls: exact ? Agent.allocationCalls() : nil,
            harnessAllocatedBytes: harnessAllocatedBytes(),
            durationNanoseconds: MonotonicClock.nanoseconds() - baseline.originNanoseconds,
            cpuNanoseconds: Self.processCPUNanoseconds() - baseline.cpuNanoseconds)
        sampler?.finish()
    }

    /// The survivors of `tracked` and the residue (the live heap above the baseline), with the residue's
    /// uncertainty: what the harness allocated on this thread since the baseline (survivor lists included) and
    /// on the sampler's, plus the spreads of the baseline's and this reading (unknown when called on another
    /// thread than the baseline's). Call it after `stop()` and a settle. The tracker's references go before the
    /// residue is read, so its side tables are not residue.
    public func residue(
        tracked lifetimes: LifetimeTracker, growth: [GrowthSeries], survivorStacks: Bool = false
    ) -> (residueBytes: Int, leaks: LeakMeasurements) {
        let tracked = lifetimes.tracked()
        let survivors = lifetimes.survivors()
        let stacks = survivorStacks ? lifetimes.survivorStacks() : nil
        lifetimes.removeAll()
        probe.flushThreadCache()
        let heap = confirmedHeap()
        let harness = harnessAllocatedBytes().map { max(0, $0) + (sampler?.allocatedBytes ?? 0) }
        let leaks = LeakMeasurements(
            tracked: tracked, survivors: survivors, growth: growth,
            threadCacheBytesAtBaseline: baseline.threadCacheBytes, threadCacheBytesAtEnd: heap.stats.threadCacheBytes,
            survivorStacks: stacks,
            liveResidueUncertaintyBytes: harness.map { $0 + baseline.spreadBytes + heap.spreadBytes })
        return (heap.stats.liveBytes - baseline.allocatedBytes, leaks)
    }

    /// The figures of the work, once `residue` was read: the peaks of the samples and the phase boundaries
    /// (`Peaks`), the kernel's RSS high-water mark, the phases that ran, and the floor (nil when `stop()` ran
    /// on another thread than the baseline, which the harness's allocations are counted on).
    public func measurements(
        residue: (residueBytes: Int, leaks: LeakMeasurements), metrics: [Metric] = [], memoryWarnings: Int? = nil
    ) -> CaseMeasurements {
        let end = end ?? End(harnessAllocatedBytes: nil, durationNanoseconds: 0, cpuNanoseconds: 0)
        var exactValues: ExactPeakValues?
        if let live = baseline.exactLiveBytes, let peak = end.exactPeakLiveBytes, let calls = end.exactCalls,
            let start = baseline.exactCalls
        {
            exactValues = ExactPeakValues(baselineLiveBytes: live, peakLiveBytes: peak, allocationCalls: calls - start)
        }
        let output = sampler?.collect()
        let samplerBytes = output?.figures.samplerAllocatedBytes ?? 0
        let peaks = phases.peaks(with: output)
        return CaseMeasurements(
            baselineAllocatedBytes: baseline.allocatedBytes, peak: peaks.overall.stats,
            peakRSSBytes: peakRSS(sampled: peaks.overall.rssBytes), residueBytes: residue.residueBytes,
            durationNanoseconds: end.durationNanoseconds, cpuNanoseconds: end.cpuNanoseconds,
            sampling: output?.figures ?? SamplingFigures(), phases: phases.results(with: peaks), metrics: metrics,
            samples: output?.series, leaks: residue.leaks, exact: exactValues, memoryWarnings: memoryWarnings,
            floor: end.harnessAllocatedBytes.map { harness in
                MeasurementFloor(
                    harnessAllocatedBytes: max(0, harness + samplerBytes),
                    peakReadingSpreadBytes: peaks.overall.allocatedSpreadBytes)
            })
    }

    /// The kernel's RSS high-water mark since the baseline; the sampled peak when it could not be reset or read.
    func peakRSS(sampled: Int) -> Int {
        // An unreadable /proc/self/status falls back to the sampled peak, as documented above.
        guard baseline.peakRSSReset, let status = try? KernelMemory.status() else { return sampled }
        return status.peakRSSBytes
    }

    /// CPU time of the whole process (every thread) so far, nanoseconds.
    static func processCPUNanoseconds() -> Int64 {
        var now = timespec()
        // CLOCK_PROCESS_CPUTIME_ID cannot fail on Linux with a valid pointer.
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}

/// The phase a sequence is in, read by its sampler's thread.
private final class PhaseCursor: Sendable {
    /// The first phase's until a phase is entered: the sampler's first row, at the start, is in it.
    let index = Atomic<Int>(0)
}
