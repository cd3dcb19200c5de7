import AllocatorProbe
import CSystem
import HarnessModel
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// What the sampler measured.
public struct SamplerOutput: Sendable {
    /// The stored time series (merged pairwise, keeping maxima, when it outgrew its storage).
    public var series: SampleSeries
    /// The peaks over every sample (not only the stored ones), overall and per phase index (0 when a phase got
    /// no sample), with how far the two readings that confirmed each allocated peak disagreed (see
    /// `MemoryProbe.confirmingReading`).
    public var peaks: Peaks
    /// Samples taken, the interval achieved and what the sampler thread allocated.
    public var figures: SamplingFigures
}

/// Samples a probe on a dedicated thread at a fixed interval, with absolute-time sleeps.
///
/// All storage is reserved in `init` (a `SampleBuffer` and the `Peaks`): the sampling loop
/// allocates nothing, so it neither disturbs the figures it reads nor grows with the run. The thread
/// can be made before the case's baseline (`prepare()`), so what making it costs the allocator (the
/// thread's cache, its TLS) is part of the baseline, not of the case.
public final class Sampler: @unchecked Sendable {
    // Safety: `buffer`, `peaks` and the watch state are written only by the sampler thread between
    // `start()` and the end of `finish()`'s join, and read by the caller only after the join
    // (pthread_join is a happens-before edge). `originNanoseconds` is written by `start()` before it
    // posts `go`, and read by the thread after its wait on `go` returns (sem_post/sem_wait order them).
    private let probe: any MemoryProbe
    private let intervalNanoseconds: Int64
    private let gauges: [Gauge]
    private let phaseIndex: @Sendable () -> Int
    private let phaseNames: [String]
    private let requestedIntervalNanoseconds: Int64
    private var buffer: SampleBuffer
    private let running = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    /// Posted by the thread once it is ready to sample; by `start()` or `finish()` to let it go on.
    private let ready: UnsafeMutablePointer<sem_t>
    private let go: UnsafeMutablePointer<sem_t>
    private let footprintWatch: FootprintWatch?
    private var thread: DedicatedThread?

    // Written by the sampler thread only.
    private var peaks: Peaks
    private var samplerAllocated = 0
    private var originNanoseconds: Int64 = 0
    private var watch: MemoryWatch?
    private var warningsPosted = 0
    private var limitHit: MemoryLimitHit?

    /// Reserves storage for `capacity` rows.
    /// - Parameters:
    ///   - interval: time between samples; absolute deadlines keep the rate from drifting.
    ///   - phaseNames: names by phase index; the sampler keeps a peak per phase.
    ///   - phaseIndex: returns the phase running now (called on every sample; must not allocate).
    ///   - watch: a memory budget to enforce: warnings at its level, and at the first sample over
    ///     its limit sampling ends and `watch.limitExceeded` is called on the sampler thread.
    ///   - sampleFile: a file to keep the rows in (so they survive the process); nil: anonymous memory.
    public init(
        probe: any MemoryProbe, interval: Duration, capacity: Int = 16_384, gauges: [Gauge],
        phaseNames: [String], phaseIndex: @escaping @Sendable () -> Int, watch: FootprintWatch? = nil,
        sampleFile: String? = nil
    ) throws(MeasurementError) {
        self.probe = probe
        footprintWatch = watch
        self.watch = watch.map { MemoryWatch($0.budget) }
        requestedIntervalNanoseconds = interval.nanoseconds
        // Intervals under 50 µs would make the sampler itself the workload; clamp.
        intervalNanoseconds = max(interval.nanoseconds, 50_000)
        self.gauges = gauges
        self.phaseNames = phaseNames
        self.phaseIndex = phaseIndex
        if let sampleFile {
            buffer = try SampleBuffer(capacity: capacity, gauges: gauges.count, file: sampleFile)
        } else {
            buffer = try SampleBuffer(capacity: capacity, gauges: gauges.count)
        }
        peaks = Peaks(phaseCount: phaseNames.count)
        ready = .allocate(capacity: 1)
        go = .allocate(capacity: 1)
        // Process-private semaphores with a count of 0 cannot fail to initialize.
        sem_init(ready, 0, 0)
        sem_init(go, 0, 0)
    }

    deinit {
        sem_destroy(ready)
        sem_destroy(go)
        ready.deallocate()
        go.deallocate()
    }

    /// Bytes the sampler's thread allocated while sampling; read it after `finish()`.
    public var allocatedBytes: Int { samplerAllocated }

    /// Records the case's baseline in the sample file's header, for a reader after a crash.
    public func setBaseline(allocatedBytes: Int) { buffer.setBaseline(allocatedBytes: allocatedBytes) }

    /// Makes the sampling thread and waits until it is ready: it has read the probe once (so everything
    /// reading it needs exists) and turned its allocator cache off. It samples nothing until `start`.
    /// Call it before reading the case's baseline. Later calls do nothing.
    public func prepare() throws(MeasurementError) {
        guard thread == nil else { return }
        guard let thread = DedicatedThread({ [self] in run() }) else {
            throw .system(call: "pthread_create (sampler)", errno: EAGAIN)
        }
        self.thread = thread
        // A thread start takes microseconds; 10 s means the machine is stuck: give up on sampling.
        guard Self.wait(ready, seconds: 10) else {
            finish()
            throw .system(call: "sampler thread start", errno: ETIMEDOUT)
        }
    }

    /// Starts sampling (making the thread first unless `prepare()` did); the first sample is taken at
    /// once. Times are relative to `origin` (a `MonotonicClock` reading in nanoseconds; default: now).
    public func start(originNanoseconds origin: Int64? = nil) throws(MeasurementError) {
        try prepare()
        originNanoseconds = origin ?? MonotonicClock.nanoseconds()
        running.store(true, ordering: .releasing)
        started.store(true, ordering: .releasing)
        sem_post(go)
    }

    /// The thread: gets ready, waits for `start()` (or `finish()`), samples until stopped.
    private func run() {
        probe.prepareSamplingThread()
        let allocatedBefore = probe.threadAllocatedBytes() ?? 0
        sem_post(ready)
        // `start()` or `finish()` posts `go`; an owner that does neither within an hour is gone.
        guard Self.wait(go, seconds: 3600), started.load(ordering: .acquiring) else { return }
        sampleUntilStopped()
        let allocatedAfter = probe.threadAllocatedBytes() ?? allocatedBefore
        samplerAllocated = Int(truncatingIfNeeded: allocatedAfter &- allocatedBefore)
        if let limitHit, let footprintWatch {
            // Measuring is over: from here the sampler thread may allocate.
            footprintWatch.limitExceeded(limitHit, collect())
        }
    }

    /// Waits for `semaphore` for at most `seconds` on the monotonic clock (`MonotonicClock`, the one the
    /// samples are timed by; a change of the wall clock moves neither); false when the time ran out.
    private static func wait(_ semaphore: UnsafeMutablePointer<sem_t>, seconds: Int) -> Bool {
        let deadline = MonotonicClock.nanoseconds() + Int64(seconds) * 1_000_000_000
        return memharness_semaphore_wait_until(semaphore, deadline) == 0
    }

    private func sampleUntilStopped() {
        var deadline = MonotonicClock.nanoseconds()
        // The measuring path: no allocation from here to the end of the loop.
        while running.load(ordering: .acquiring) {
            takeSample()
            if limitHit != nil { break }
            // If we fell behind (the machine was busy), skip the missed deadlines instead of bursting.
            deadline = max(deadline + intervalNanoseconds, MonotonicClock.nanoseconds())
            MonotonicClock.sleep(untilNanoseconds: deadline)
        }
        if limitHit == nil { takeSample() }
        buffer.flush()
    }

    /// Steps the warning/limit watch with this sample's footprint (allocates nothing).
    private func observeFootprint(_ reading: MemoryReading, time: Int64) {
        guard var state = watch, let footprintWatch else { return }
        let measure = footprintWatch.budget.footprint
        let footprint = measure == .allocated ? reading.allocator.liveBytes : reading.rssBytes
        switch state.observe(footprint) {
        case .warning:
            warningsPosted += 1
            footprintWatch.warn()
        case .limitExceeded:
            if limitHit == nil {
                limitHit = MemoryLimitHit(
                    timeNanoseconds: time, footprintBytes: footprint, limitBytes: state.limitBytes,
                    footprint: measure, warningsBefore: warningsPosted)
            }
        case .none:
            break
        }
        watch = state
    }

    private func takeSample() {
        var reading = probe.read()
        let time = MonotonicClock.nanoseconds() - originNanoseconds
        // A new peak is confirmed by a second snapshot, and the lower one stands: a thread cache that filled
        // (or flushed) while jemalloc summed the first is rarely caught twice. Their difference is the
        // peak's reading uncertainty.
        var spread = 0
        let live = reading.allocator.liveBytes
        if peaks.raisesAllocatedPeak(live, phase: phaseIndex()), let second = probe.confirmingReading() {
            spread = abs(second.liveBytes - live)
            if second.liveBytes < live { reading.allocator = second }
        }
        // The phase after the last reading: a reading taken across a boundary belongs to the phase it ends in
        // (the confirming one may already include what the next phase allocated).
        let phase = phaseIndex()
        // Before the gauges are read, so the row of a warning already counts it.
        observeFootprint(reading, time: time)
        let stats = AllocatorStatsValues(reading.allocator)
        peaks.record(stats, rssBytes: reading.rssBytes, phase: phase, spreadBytes: spread)
        buffer.add(time: time, stats, rssBytes: reading.rssBytes, phase: phase, gauges: gauges)
    }

    /// Stops sampling (after one last sample) and waits for the thread; allocates nothing, so a
    /// caller can measure the heap before `collect()` builds the output. A thread that was prepared
    /// but never started ends without sampling.
    public func finish() {
        running.store(false, ordering: .releasing)
        if thread != nil { sem_post(go) }
        thread?.join()
    }

    /// The measured output; call after `finish()` (or from the limit handler). This allocates the series.
    public func collect() -> SamplerOutput {
        SamplerOutput(
            series: buffer.series(phaseNames: phaseNames, gaugeNames: gauges.map(\.name)),
            peaks: peaks,
            figures: SamplingFigures(
                sampleCount: buffer.sampleCount, requestedIntervalNanoseconds: requestedIntervalNanoseconds,
                achievedIntervalNanoseconds: buffer.achievedIntervalNanoseconds, samplerAllocatedBytes: samplerAllocated
            ))
    }
}

extension AllocatorStatsValues {
    /// The probe's reading as a plain value. Its allocated figure is the live heap (`stats.allocated`
    /// without the freed regions held in thread caches), as the case's baseline and boundaries read it.
    init(_ stats: AllocatorStats) {
        self.init(
            allocatedBytes: stats.liveBytes, activeBytes: stats.activeBytes, residentBytes: stats.residentBytes,
            mappedBytes: stats.mappedBytes, retainedBytes: stats.retainedBytes, metadataBytes: stats.metadataBytes)
    }
}
