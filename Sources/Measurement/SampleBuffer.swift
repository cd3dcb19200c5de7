import HarnessModel
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// The sampler's rows, in storage reserved up front: adding a sample never allocates.
///
/// A row holds the time, six jemalloc figures, RSS, the phase and the gauges, as `Int64`s. When the
/// reserved rows fill up, neighbouring rows merge pairwise keeping the maximum of every figure (the
/// first row's time and phase), so peaks survive and each later row stands for twice as many samples.
///
/// The storage is either anonymous memory or a file mapped shared (`SampleBuffer(file:)`): with a
/// file, the rows and the header (rows stored, samples per row, samples taken, the case's baseline)
/// are in the file at every moment, so the runner can read the samples of a case process that timed
/// out or crashed (`SampleBuffer.read(file:...)`). Mapped memory is not malloc's: the buffer never
/// shows in the figures it records.
public struct SampleBuffer: ~Copyable {
    /// Fields of a row before the gauges: time, six jemalloc figures, RSS, phase.
    static let fixedFields = 9
    /// Header slots: magic, version, stride, capacity, rows, samples per row, samples, baseline, first and last time.
    static let headerSlots = 16
    static let magic: Int64 = 0x6D65_6D68_7361_6D70  // "memhsamp"
    static let version: Int64 = 1

    let capacity: Int
    let stride: Int
    private let base: UnsafeMutablePointer<Int64>
    private let byteCount: Int
    /// The pending row (samples not yet committed), outside the mapped storage.
    private let pending: UnsafeMutablePointer<Int64>
    private var pendingSamples = 0

    /// Anonymous storage for `capacity` rows (at least 16, kept even) of `gauges` gauges.
    public init(capacity: Int, gauges: Int) throws(MeasurementError) {
        try self.init(capacity: capacity, gauges: gauges, descriptor: -1)
    }

    /// Storage in the file at `path` (created or truncated), mapped shared, for `capacity` rows of `gauges` gauges.
    public init(capacity: Int, gauges: Int, file path: String) throws(MeasurementError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .system(call: "open \(path)", errno: errno) }
        defer { close(descriptor) }
        try self.init(capacity: capacity, gauges: gauges, descriptor: descriptor)
    }

    private init(capacity: Int, gauges: Int, descriptor: Int32) throws(MeasurementError) {
        // Fewer than 16 rows cannot show a time line; an odd count would leave a row out of every merge.
        self.capacity = max(16, capacity + capacity % 2)
        stride = Self.fixedFields + gauges
        byteCount = (Self.headerSlots + self.capacity * stride) * MemoryLayout<Int64>.size
        if descriptor >= 0 && ftruncate(descriptor, off_t(byteCount)) != 0 {
            throw .system(call: "ftruncate", errno: errno)
        }
        let flags = descriptor >= 0 ? MAP_SHARED : (MAP_PRIVATE | MAP_ANONYMOUS)
        guard let raw = mmap(nil, byteCount, PROT_READ | PROT_WRITE, flags, descriptor, 0), raw != MAP_FAILED else {
            throw .system(call: "mmap", errno: errno)
        }
        base = raw.bindMemory(to: Int64.self, capacity: byteCount / MemoryLayout<Int64>.size)
        pending = UnsafeMutablePointer<Int64>.allocate(capacity: stride)
        pending.initialize(repeating: 0, count: stride)
        for (slot, value) in [Self.magic, Self.version, Int64(stride), Int64(self.capacity), 0, 1, 0, 0].enumerated() {
            base[slot] = value
        }
    }

    deinit {
        munmap(base, byteCount)
        pending.deallocate()
    }

    private var rows: UnsafeMutablePointer<Int64> { base + Self.headerSlots }
    /// Rows committed so far.
    public var storedRows: Int { Int(base[4]) }
    /// Samples each committed row stands for.
    public var samplesPerRow: Int { Int(base[5]) }
    /// Samples added so far.
    public var sampleCount: Int { Int(base[6]) }

    /// Records the case's baseline in the header, for a reader of the file.
    public func setBaseline(allocatedBytes: Int) { base[7] = Int64(allocatedBytes) }

    /// Adds one sample: `time` (ns since the case started), the seven memory figures in row order,
    /// the phase index and the gauges' values. Allocates nothing.
    public mutating func add(
        time: Int64, _ stats: AllocatorStatsValues, rssBytes: Int, phase: Int, gauges: borrowing [Gauge]
    ) {
        if pendingSamples == 0 {
            pending[0] = time
            pending[8] = Int64(phase)
            for field in 1..<stride where field != 8 { pending[field] = Int64.min }
        }
        withFigures(stats, rssBytes) { field, value in pending[field] = max(pending[field], value) }
        for gauge in 0..<gauges.count {
            pending[Self.fixedFields + gauge] = max(pending[Self.fixedFields + gauge], gauges[gauge].value)
        }
        if sampleCount == 0 { base[8] = time }
        base[9] = time
        base[6] += 1
        pendingSamples += 1
        if pendingSamples == samplesPerRow { commitPending() }
    }

    /// Calls `body` with each memory figure's field index and value, without building an array.
    @inline(__always)
    private func withFigures(_ stats: AllocatorStatsValues, _ rss: Int, _ body: (Int, Int64) -> Void) {
        body(1, Int64(stats.allocatedBytes))
        body(2, Int64(stats.activeBytes))
        body(3, Int64(stats.residentBytes))
        body(4, Int64(stats.mappedBytes))
        body(5, Int64(stats.retainedBytes))
        body(6, Int64(stats.metadataBytes))
        body(7, Int64(rss))
    }

    /// Commits a partly filled pending row (at the end of sampling).
    public mutating func flush() { commitPending() }

    private mutating func commitPending() {
        guard pendingSamples > 0 else { return }
        if storedRows == capacity { compact() }
        (rows + storedRows * stride).update(from: pending, count: stride)
        base[4] += 1
        pendingSamples = 0
    }

    /// Merges row pairs in place, keeping the first row's time and phase and the maximum of every figure.
    private mutating func compact() {
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
        base[4] = Int64(capacity / 2)
        base[5] *= 2
    }

    /// The mean interval between samples, nanoseconds (0 with fewer than two samples).
    public var achievedIntervalNanoseconds: Int64 {
        sampleCount > 1 ? (base[9] - base[8]) / Int64(sampleCount - 1) : 0
    }

    /// The committed rows as a series (this allocates; call after sampling).
    public func series(phaseNames: [String], gaugeNames: [String]) -> SampleSeries {
        Self.series(
            rows: rows, count: storedRows, stride: stride, samplesPerRow: samplesPerRow,
            phaseNames: phaseNames, gaugeNames: gaugeNames)
    }

    static func series(
        rows: UnsafePointer<Int64>, count: Int, stride: Int, samplesPerRow: Int, phaseNames: [String],
        gaugeNames: [String]
    ) -> SampleSeries {
        var series = SampleSeries(phaseNames: phaseNames, gaugeNames: gaugeNames)
        series.mergedSamplesPerRow = samplesPerRow
        let gauges = min(gaugeNames.count, stride - fixedFields)
        for index in 0..<count {
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
            for gauge in 0..<gauges { series.gauges[gauge].append(row[fixedFields + gauge]) }
        }
        return series
    }

    /// What a sample file left by a case process holds.
    public struct FileContents: Sendable {
        public var series: SampleSeries
        public var sampleCount: Int
        public var baselineAllocatedBytes: Int
        public var achievedIntervalNanoseconds: Int64
    }

    /// Reads the sample file of a case process that ended without a result; nil when the file is
    /// missing, empty or not a sample file (the process died before sampling began).
    public static func read(file path: String, phaseNames: [String], gaugeNames: [String]) -> FileContents? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        let headerBytes = headerSlots * MemoryLayout<Int64>.size
        guard fstat(descriptor, &status) == 0, Int(status.st_size) >= headerBytes else { return nil }
        let size = Int(status.st_size)
        guard let raw = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), raw != MAP_FAILED else { return nil }
        defer { munmap(raw, size) }
        let header = raw.assumingMemoryBound(to: Int64.self)
        let stride = Int(header[2])
        let capacity = Int(header[3])
        let stored = Int(header[4])
        // A file that does not describe itself consistently is not ours, or was cut short: read nothing.
        guard header[0] == magic, header[1] == version, stride >= fixedFields, capacity > 0,
            (0...capacity).contains(stored), size >= headerBytes + capacity * stride * MemoryLayout<Int64>.size
        else { return nil }
        let count = Int(header[6])
        let series = Self.series(
            rows: header + headerSlots, count: stored, stride: stride, samplesPerRow: max(1, Int(header[5])),
            phaseNames: phaseNames, gaugeNames: gaugeNames)
        let interval = count > 1 ? (header[9] - header[8]) / Int64(count - 1) : 0
        return FileContents(
            series: series, sampleCount: count, baselineAllocatedBytes: Int(header[7]),
            achievedIntervalNanoseconds: interval)
    }
}

extension CaseMeasurements {
    /// What the sample file of a case that ended without a result shows: peaks over its rows (which
    /// keep maxima when merged), phases as the rows saw them; no residue, leaks or exact figures.
    public init(partialFrom file: SampleBuffer.FileContents, requestedIntervalNanoseconds: Int64) {
        let series = file.series
        let peaks = Peaks(series: series)
        let end = series.timeNanoseconds.last ?? 0
        self.init(
            baselineAllocatedBytes: file.baselineAllocatedBytes, peak: peaks.overall.stats,
            peakRSSBytes: peaks.overall.rssBytes, residueBytes: nil, durationNanoseconds: end,
            sampling: SamplingFigures(
                sampleCount: file.sampleCount, requestedIntervalNanoseconds: requestedIntervalNanoseconds,
                achievedIntervalNanoseconds: file.achievedIntervalNanoseconds),
            phases: peaks.phaseResults(spannedBy: series, endNanoseconds: end), samples: series)
    }
}
