import AllocatorProbe
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
    /// Peak of each jemalloc figure over every sample (not only the stored ones).
    public var peak: AllocatorStatsValues
    /// Peak RSS seen by sampling, bytes.
    public var peakRSSBytes: Int
    /// Peak allocated / resident per phase index, absolute bytes (0 when the phase got no sample).
    public var phasePeakAllocatedBytes: [Int]
    public var phasePeakResidentBytes: [Int]
    /// Samples taken, the interval achieved and what the sampler thread allocated.
    public var figures: SamplingFigures
}

/// Samples a probe on a dedicated thread at a fixed interval, with absolute-time sleeps.
///
/// All storage is reserved in `init` (a `SampleBuffer` and the per-phase peaks): the sampling loop
/// allocates nothing, so it neither disturbs the figures it reads nor grows with the run.
public final class Sampler: @unchecked Sendable {
    // Safety: `buffer`, the peaks and the watch state are written only by the sampler thread between
    // `start()` and the end of `finish()`'s join, and read by the caller only after the join
    // (pthread_join is a happens-before edge).
    private let probe: any MemoryProbe
    private let intervalNanoseconds: Int64
    private let gauges: [Gauge]
    private let phaseIndex: @Sendable () -> Int
    private let phaseNames: [String]
    private let requestedIntervalNanoseconds: Int64
    private var buffer: SampleBuffer
    private let phasePeakAllocated: UnsafeMutablePointer<Int>
    private let phasePeakResident: UnsafeMutablePointer<Int>
    private let running = Atomic<Bool>(false)
    private let footprintWatch: FootprintWatch?
    private let observer: (@Sendable (Int, Int64) -> Void)?
    private var thread: DedicatedThread?

    // Written by the sampler thread only.
    private var peak = AllocatorStatsValues()
    private var peakRSS = 0
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
    ///   - observer: called with each sample's `stats.allocated` and time (must not allocate), e.g. to
    ///     let the agent snapshot allocation stacks at the peak.
    public init(
        probe: any MemoryProbe, interval: Duration, capacity: Int = 16_384, gauges: [Gauge],
        phaseNames: [String], phaseIndex: @escaping @Sendable () -> Int, watch: FootprintWatch? = nil,
        sampleFile: String? = nil, observer: (@Sendable (Int, Int64) -> Void)? = nil
    ) throws(MeasurementError) {
        self.probe = probe
        footprintWatch = watch
        self.watch = watch.map { MemoryWatch($0.budget) }
        self.observer = observer
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
        // Phase indices run from 0 to phaseNames.count - 1; one slot more is a guard, never read.
        phasePeakAllocated = .allocate(capacity: phaseNames.count + 1)
        phasePeakAllocated.initialize(repeating: 0, count: phaseNames.count + 1)
        phasePeakResident = .allocate(capacity: phaseNames.count + 1)
        phasePeakResident.initialize(repeating: 0, count: phaseNames.count + 1)
    }

    deinit {
        phasePeakAllocated.deallocate()
        phasePeakResident.deallocate()
    }

    /// Records the case's baseline in the sample file's header, for a reader after a crash.
    public func setBaseline(allocatedBytes: Int) { buffer.setBaseline(allocatedBytes: allocatedBytes) }

    /// Starts the sampling thread; the first sample is taken at once. Times are relative to
    /// `origin` (a `MonotonicClock` reading in nanoseconds; default: now).
    public func start(originNanoseconds origin: Int64? = nil) throws(MeasurementError) {
        originNanoseconds = origin ?? MonotonicClock.nanoseconds()
        running.store(true, ordering: .releasing)
        guard let thread = DedicatedThread({ [self] in sampleUntilStopped() }) else {
            running.store(false, ordering: .releasing)
            throw .system(call: "pthread_create (sampler)", errno: EAGAIN)
        }
        self.thread = thread
    }

    private func sampleUntilStopped() {
        let allocatedBefore = probe.threadAllocatedBytes() ?? 0
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
        let allocatedAfter = probe.threadAllocatedBytes() ?? allocatedBefore
        samplerAllocated = Int(truncatingIfNeeded: allocatedAfter &- allocatedBefore)
        if let limitHit, let footprintWatch {
            // Measuring is over: from here the sampler thread may allocate.
            footprintWatch.limitExceeded(limitHit, collect())
        }
    }

    /// Steps the warning/limit watch with this sample's footprint (allocates nothing).
    private func observeFootprint(_ reading: MemoryReading, time: Int64) {
        guard var state = watch, let footprintWatch else { return }
        let measure = footprintWatch.budget.footprint
        let footprint = measure == .allocated ? reading.allocator.allocatedBytes : reading.rssBytes
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
        let reading = probe.read()
        let time = MonotonicClock.nanoseconds() - originNanoseconds
        let phase = phaseIndex()
        // Before the gauges are read, so the row of a warning already counts it.
        observeFootprint(reading, time: time)
        let stats = AllocatorStatsValues(reading.allocator)
        peak = peak.elementwiseMax(stats)
        peakRSS = max(peakRSS, reading.rssBytes)
        if phase >= 0 && phase < phaseNames.count {
            phasePeakAllocated[phase] = max(phasePeakAllocated[phase], stats.allocatedBytes)
            phasePeakResident[phase] = max(phasePeakResident[phase], stats.residentBytes)
        }
        buffer.add(time: time, stats, rssBytes: reading.rssBytes, phase: phase, gauges: gauges)
        observer?(stats.allocatedBytes, time)
    }

    /// Stops sampling (after one last sample) and waits for the thread; allocates nothing, so a
    /// caller can measure the heap before `collect()` builds the output.
    public func finish() {
        running.store(false, ordering: .releasing)
        thread?.join()
    }

    /// Stops sampling (after one last sample) and returns what was measured. Waits for the thread.
    /// After a memory-limit stop, returns the samples up to the one that exceeded the limit.
    public func stop() -> SamplerOutput {
        finish()
        return collect()
    }

    /// The measured output; call after `finish()` (or from the limit handler). This allocates the series.
    public func collect() -> SamplerOutput {
        SamplerOutput(
            series: buffer.series(phaseNames: phaseNames, gaugeNames: gauges.map(\.name)),
            peak: peak, peakRSSBytes: peakRSS,
            phasePeakAllocatedBytes: (0..<phaseNames.count).map { phasePeakAllocated[$0] },
            phasePeakResidentBytes: (0..<phaseNames.count).map { phasePeakResident[$0] },
            figures: SamplingFigures(
                sampleCount: buffer.sampleCount, requestedIntervalNanoseconds: requestedIntervalNanoseconds,
                achievedIntervalNanoseconds: buffer.achievedIntervalNanoseconds, samplerAllocatedBytes: samplerAllocated
            ))
    }
}

extension AllocatorStatsValues {
    /// The probe's reading as a plain value.
    init(_ stats: AllocatorStats) {
        self.init(
            allocatedBytes: stats.allocatedBytes, activeBytes: stats.activeBytes, residentBytes: stats.residentBytes,
            mappedBytes: stats.mappedBytes, retainedBytes: stats.retainedBytes, metadataBytes: stats.metadataBytes)
    }
}
