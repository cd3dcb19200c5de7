import HarnessModel

/// The highest figures of one span of a case (a phase, or the whole case), raised one reading at a time.
public struct PeakFigures: Sendable, Hashable {
    /// The highest value of each jemalloc figure, each on its own (not one consistent reading), absolute bytes.
    public private(set) var stats = AllocatorStatsValues()
    /// The highest resident set size, bytes.
    public private(set) var rssBytes = 0
    /// How far the two back-to-back readings that set `stats.allocatedBytes` disagreed, bytes (0 when unconfirmed).
    public private(set) var allocatedSpreadBytes = 0
    /// Readings taken into account.
    public private(set) var readings = 0

    /// No reading yet: every figure 0.
    public init() {}

    /// Raises each figure to the reading's where the reading is higher: the one computation every peak of a
    /// case goes through. The spread follows the allocated figure: it becomes `spreadBytes` when this reading
    /// sets a new allocated peak (on a tie the earlier reading's stays). Allocates nothing.
    public mutating func raise(to stats: AllocatorStatsValues, rssBytes: Int = 0, spreadBytes: Int = 0) {
        if stats.allocatedBytes > self.stats.allocatedBytes { allocatedSpreadBytes = spreadBytes }
        self.stats = self.stats.elementwiseMax(stats)
        self.rssBytes = max(self.rssBytes, rssBytes)
        readings += 1
    }

    /// Raises these peaks to `other`'s, as if its readings had been taken here after these.
    public mutating func raise(to other: PeakFigures) {
        guard other.readings > 0 else { return }
        raise(to: other.stats, rssBytes: other.rssBytes, spreadBytes: other.allocatedSpreadBytes)
        readings += other.readings - 1
    }
}

/// The peaks of a case, overall and per phase, from its readings: the sampler's samples, the readings taken
/// at phase boundaries, or the rows of a stored series.
///
/// The storage is reserved when it is made: recording a reading allocates nothing, so the sampler keeps
/// its peaks here while it samples.
public struct Peaks: Sendable, Hashable {
    /// The peaks over every reading.
    public private(set) var overall = PeakFigures()
    /// The peaks over the readings of each phase, by phase index.
    public private(set) var phases: [PeakFigures]

    /// No readings yet, for `phaseCount` phases.
    public init(phaseCount: Int) {
        phases = [PeakFigures](repeating: PeakFigures(), count: max(phaseCount, 0))
        // The first reading recorded in a process makes the runtime build what recording needs (~400 B, once):
        // here, in a copy, before any baseline, rather than at a case's first sample or phase boundary.
        var warm = self
        warm.record(AllocatorStatsValues(), phase: 0)
    }

    /// The peaks of every row of `series`, each row in its phase. Rows merged when the series outgrew its
    /// storage keep the maximum of each figure, so the overall peaks are those of every sample; a merged row
    /// counts in the phase of its first sample.
    public init(series: SampleSeries) {
        self.init(phaseCount: series.phaseNames.count)
        for row in 0..<series.count {
            record(series.stats(at: row), rssBytes: series.rssBytes[row], phase: series.phaseIndex[row])
        }
    }

    /// Records one reading taken in phase `phase`. A reading outside the phases (before the first began, after
    /// the last ended) counts overall only.
    public mutating func record(_ stats: AllocatorStatsValues, rssBytes: Int = 0, phase: Int, spreadBytes: Int = 0) {
        overall.raise(to: stats, rssBytes: rssBytes, spreadBytes: spreadBytes)
        if phases.indices.contains(phase) {
            phases[phase].raise(to: stats, rssBytes: rssBytes, spreadBytes: spreadBytes)
        }
    }

    /// Whether a reading of `allocatedBytes` in `phase` would set a new allocated peak, overall or of the phase.
    public func raisesAllocatedPeak(_ allocatedBytes: Int, phase: Int) -> Bool {
        allocatedBytes > overall.stats.allocatedBytes
            || (phases.indices.contains(phase) && allocatedBytes > phases[phase].stats.allocatedBytes)
    }

    /// These peaks raised to `other`'s, phase by phase (readings of the same case taken elsewhere, such as at
    /// the phase boundaries); on a tie these stay, with their spread.
    public func merging(_ other: Peaks) -> Peaks {
        var merged = self
        merged.overall.raise(to: other.overall)
        for phase in other.phases.indices where merged.phases.indices.contains(phase) {
            merged.phases[phase].raise(to: other.phases[phase])
        }
        return merged
    }

    /// The phases as the rows of `series` saw them, with these peaks: each phase from its first row to the next
    /// phase's first (the last one to `endNanoseconds`). Rows outside the phases start no phase.
    public func phaseResults(spannedBy series: SampleSeries, endNanoseconds: Int64) -> [PhaseResult] {
        var starts: [(index: Int, time: Int64)] = []
        for row in 0..<series.count where starts.last?.index != series.phaseIndex[row] {
            starts.append((series.phaseIndex[row], series.timeNanoseconds[row]))
        }
        return starts.enumerated().compactMap { position, start in
            guard series.phaseNames.indices.contains(start.index), phases.indices.contains(start.index) else {
                return nil
            }
            let end = position + 1 < starts.count ? starts[position + 1].time : endNanoseconds
            return PhaseResult(
                name: series.phaseNames[start.index], startNanoseconds: start.time, endNanoseconds: end,
                peakAllocatedBytes: phases[start.index].stats.allocatedBytes,
                peakResidentBytes: phases[start.index].stats.residentBytes)
        }
    }
}

extension SampleSeries {
    /// The six jemalloc figures of row `row`, bytes.
    public func stats(at row: Int) -> AllocatorStatsValues {
        AllocatorStatsValues(
            allocatedBytes: allocatedBytes[row], activeBytes: activeBytes[row], residentBytes: residentBytes[row],
            mappedBytes: mappedBytes[row], retainedBytes: retainedBytes[row], metadataBytes: metadataBytes[row])
    }
}
