import AllocatorProbe
import HarnessModel
import Synchronization

#if canImport(Glibc)
import Glibc
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
    /// Samples taken.
    public var sampleCount: Int
    /// Mean interval between samples, nanoseconds.
    public var achievedIntervalNanoseconds: Int64
    /// Bytes the sampler thread allocated between its first and last sample (`thread.allocated`).
    public var samplerAllocatedBytes: Int
}

/// Samples a probe on a dedicated thread at a fixed interval, with absolute-time sleeps.
///
/// All storage is reserved in `init`: the sampling loop allocates nothing, so it neither
/// disturbs the figures it reads nor grows with the run. When the reserved rows fill up,
/// neighbouring rows are merged keeping the maximum of each figure (peaks survive), and each
/// later row stands for twice as many samples.
public final class Sampler: DedicatedThread, @unchecked Sendable {
    // Safety: `rows`, the peak arrays and the watch state are written only by the sampler thread
    // between `start()` and the end of `stop()`'s join, and read by the caller only after the join
    // (happens-before through `Thread` completion and the `finished` atomic with acquiring loads).
    private let probe: any MemoryProbe
    private let intervalNanoseconds: Int64
    private let capacity: Int
    private let gauges: [Gauge]
    private let phaseIndex: @Sendable () -> Int
    private let phaseNames: [String]
    private let stride: Int
    private let rows: UnsafeMutablePointer<Int64>
    private let pending: UnsafeMutablePointer<Int64>
    private let phasePeakAllocated: UnsafeMutablePointer<Int64>
    private let phasePeakResident: UnsafeMutablePointer<Int64>
    private let running = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    private let footprintWatch: FootprintWatch?

    // Written by the sampler thread only.
    private var storedRows = 0
    private var pendingSamples = 0
    private var samplesPerRow = 1
    private var sampleCount = 0
    private var firstSampleTime: Int64 = 0
    private var lastSampleTime: Int64 = 0
    private var peak = AllocatorStatsValues()
    private var peakRSS = 0
    private var samplerAllocated = 0
    private var originNanoseconds: Int64 = 0
    private var watch: MemoryWatch?
    private var warningsPosted = 0
    private var limitHit: MemoryLimitHit?

    /// Fields of a row before the gauges: time, six jemalloc figures, RSS, phase.
    private static let fixedFields = 9

    /// Reserves storage for `capacity` rows (at least 16).
    /// - Parameters:
    ///   - interval: time between samples; absolute deadlines keep the rate from drifting.
    ///   - phaseNames: names by phase index; the sampler keeps a peak per phase.
    ///   - phaseIndex: returns the phase running now (called on every sample; must not allocate).
    ///   - watch: a memory budget to enforce: warnings at its level, and at the first sample over
    ///     its limit sampling ends and `watch.limitExceeded` is called on the sampler thread.
    public init(probe: any MemoryProbe, interval: Duration, capacity: Int = 16_384, gauges: [Gauge],
                phaseNames: [String], phaseIndex: @escaping @Sendable () -> Int, watch: FootprintWatch? = nil) {
        self.probe = probe
        footprintWatch = watch
        self.watch = watch.map { MemoryWatch($0.budget) }
        // Intervals under 50 µs would make the sampler itself the workload; clamp.
        intervalNanoseconds = max(interval.nanoseconds, 50_000)
        // Fewer than 16 rows cannot show a time line; clamp, and keep it even so pairs merge cleanly.
        self.capacity = max(16, capacity + capacity % 2)
        self.gauges = gauges
        self.phaseNames = phaseNames
        self.phaseIndex = phaseIndex
        stride = Self.fixedFields + gauges.count
        rows = .allocate(capacity: self.capacity * stride)
        rows.initialize(repeating: 0, count: self.capacity * stride)
        pending = .allocate(capacity: stride)
        pending.initialize(repeating: 0, count: stride)
        phasePeakAllocated = .allocate(capacity: max(phaseNames.count, 1))
        phasePeakAllocated.initialize(repeating: 0, count: max(phaseNames.count, 1))
        phasePeakResident = .allocate(capacity: max(phaseNames.count, 1))
        phasePeakResident.initialize(repeating: 0, count: max(phaseNames.count, 1))
    }

    deinit {
        rows.deallocate()
        pending.deallocate()
        phasePeakAllocated.deallocate()
        phasePeakResident.deallocate()
    }

    /// Starts the sampling thread; the first sample is taken at once. Times are relative to `origin`
    /// (a `CLOCK_MONOTONIC` reading in nanoseconds; default: now).
    public func start(originNanoseconds origin: Int64? = nil) {
        originNanoseconds = origin ?? Pacer.monotonicNanoseconds()
        running.store(true, ordering: .releasing)
        if !startDedicatedThread() {
            finished.store(true, ordering: .releasing)
        }
    }

    func threadMain() {
        let allocatedBefore = probe.threadAllocatedBytes() ?? 0
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        // The measuring path: no allocation from here to the end of the loop.
        while running.load(ordering: .acquiring) {
            takeSample()
            if limitHit != nil { break }
            deadline.tv_nsec += Int(intervalNanoseconds % 1_000_000_000)
            deadline.tv_sec += Int(intervalNanoseconds / 1_000_000_000)
            if deadline.tv_nsec >= 1_000_000_000 {
                deadline.tv_nsec -= 1_000_000_000
                deadline.tv_sec += 1
            }
            // If we fell behind (the machine was busy), skip the missed deadlines instead of bursting.
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            if now.tv_sec > deadline.tv_sec || (now.tv_sec == deadline.tv_sec && now.tv_nsec > deadline.tv_nsec) {
                deadline = now
            }
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
        }
        if limitHit == nil { takeSample() }
        commitPending()
        let allocatedAfter = probe.threadAllocatedBytes() ?? allocatedBefore
        samplerAllocated = Int(allocatedAfter &- allocatedBefore)
        if let limitHit, let footprintWatch {
            // Measuring is over: from here the sampler thread may allocate.
            footprintWatch.limitExceeded(limitHit, collect())
        }
        finished.store(true, ordering: .releasing)
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
                limitHit = MemoryLimitHit(timeNanoseconds: time, footprintBytes: footprint, limitBytes: state.limitBytes,
                                          footprint: measure, warningsBefore: warningsPosted)
            }
        case .none:
            break
        }
        watch = state
    }

    private func takeSample() {
        let reading = probe.read()
        let time = Pacer.monotonicNanoseconds() - originNanoseconds
        let phase = phaseIndex()
        // Before the gauges are read, so the row of a warning already counts it.
        observeFootprint(reading, time: time)
        if sampleCount == 0 { firstSampleTime = time }
        lastSampleTime = time
        sampleCount += 1

        let stats = reading.allocator
        peak.allocatedBytes = max(peak.allocatedBytes, stats.allocatedBytes)
        peak.activeBytes = max(peak.activeBytes, stats.activeBytes)
        peak.residentBytes = max(peak.residentBytes, stats.residentBytes)
        peak.mappedBytes = max(peak.mappedBytes, stats.mappedBytes)
        peak.retainedBytes = max(peak.retainedBytes, stats.retainedBytes)
        peak.metadataBytes = max(peak.metadataBytes, stats.metadataBytes)
        peakRSS = max(peakRSS, reading.rssBytes)
        if phase >= 0 && phase < phaseNames.count {
            phasePeakAllocated[phase] = max(phasePeakAllocated[phase], Int64(stats.allocatedBytes))
            phasePeakResident[phase] = max(phasePeakResident[phase], Int64(stats.residentBytes))
        }

        let values: (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) = (
            time, Int64(stats.allocatedBytes), Int64(stats.activeBytes), Int64(stats.residentBytes),
            Int64(stats.mappedBytes), Int64(stats.retainedBytes), Int64(stats.metadataBytes),
            Int64(reading.rssBytes), Int64(phase)
        )
        if pendingSamples == 0 {
            pending[0] = values.0
            pending[8] = values.8
            for field in 1...7 { pending[field] = Int64.min }
            for gauge in 0..<gauges.count { pending[Self.fixedFields + gauge] = Int64.min }
        }
        pending[1] = max(pending[1], values.1)
        pending[2] = max(pending[2], values.2)
        pending[3] = max(pending[3], values.3)
        pending[4] = max(pending[4], values.4)
        pending[5] = max(pending[5], values.5)
        pending[6] = max(pending[6], values.6)
        pending[7] = max(pending[7], values.7)
        for gauge in 0..<gauges.count {
            pending[Self.fixedFields + gauge] = max(pending[Self.fixedFields + gauge], gauges[gauge].value)
        }
        pendingSamples += 1
        if pendingSamples == samplesPerRow { commitPending() }
    }

    private func commitPending() {
        guard pendingSamples > 0 else { return }
        if storedRows == capacity { compact() }
        (rows + storedRows * stride).update(from: pending, count: stride)
        storedRows += 1
        pendingSamples = 0
    }

    /// Merges row pairs in place, keeping the first row's time and phase and the maximum of every figure.
    private func compact() {
        for target in 0..<(capacity / 2) {
            let first = rows + (2 * target) * stride
            let second = first + stride
            let destination = rows + target * stride
            destination[0] = first[0]
            destination[8] = first[8]
            for field in 1..<stride where field != 8 {
                destination[field] = max(first[field], second[field])
            }
        }
        storedRows = capacity / 2
        samplesPerRow *= 2
    }

    /// Stops sampling (after one last sample) and waits for the thread; allocates nothing, so a
    /// caller can measure the heap before `collect()` builds the output.
    public func finish() {
        running.store(false, ordering: .releasing)
        while !finished.load(ordering: .acquiring) {
            usleep(200)
        }
    }

    /// Stops sampling (after one last sample) and returns what was measured. Waits for the thread.
    /// After a memory-limit stop, returns the samples up to the one that exceeded the limit.
    public func stop() -> SamplerOutput {
        finish()
        return collect()
    }

    /// The measured output; call after `finish()`. This allocates the series.
    public func collect() -> SamplerOutput {
        var series = SampleSeries(phaseNames: phaseNames, gaugeNames: gauges.map(\.name))
        series.mergedSamplesPerRow = samplesPerRow
        for index in 0..<storedRows {
            let row = rows + index * stride
            series.timeNanoseconds.append(row[0])
            series.allocatedBytes.append(Int(row[1]))
            series.activeBytes.append(Int(row[2]))
            series.residentBytes.append(Int(row[3]))
            series.mappedBytes.append(Int(row[4]))
            series.retainedBytes.append(Int(row[5]))
            series.metadataBytes.append(Int(row[6]))
            series.rssBytes.append(Int(row[7]))
            series.phaseIndex.append(Int(row[8]))
            for gauge in 0..<gauges.count {
                series.gauges[gauge].append(row[Self.fixedFields + gauge])
            }
        }
        let achieved = sampleCount > 1 ? (lastSampleTime - firstSampleTime) / Int64(sampleCount - 1) : 0
        return SamplerOutput(
            series: series, peak: peak, peakRSSBytes: peakRSS,
            phasePeakAllocatedBytes: (0..<phaseNames.count).map { Int(phasePeakAllocated[$0]) },
            phasePeakResidentBytes: (0..<phaseNames.count).map { Int(phasePeakResident[$0]) },
            sampleCount: sampleCount, achievedIntervalNanoseconds: achieved,
            samplerAllocatedBytes: samplerAllocated
        )
    }
}
