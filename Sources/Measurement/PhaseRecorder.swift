import WorkloadKit

/// The phases of a case as it crosses their boundaries: when each began and ended, and the
/// allocated bytes read at each boundary (so a phase shorter than the sampling interval still has a peak).
///
/// Its storage is reserved when it is made, before the case's baseline: recording a boundary allocates nothing.
struct PhaseRecorder {
    let names: [String]
    let exact: Bool
    private var boundaryPeak: [Int]
    private var recorded: [(index: Int, start: Int64, end: Int64, exactPeak: Int?)] = []
    private var current = -1
    private var currentStart: Int64 = 0

    init(names: [String], exact: Bool) {
        self.names = names
        self.exact = exact
        boundaryPeak = [Int](repeating: 0, count: names.count)
        recorded.reserveCapacity(names.count + 1)
    }

    /// Ends the current phase and starts phase `index` (`names.count` ends the last one).
    mutating func enter(_ index: Int, allocatedBytes: Int, atNanoseconds now: Int64) {
        let exactPhasePeak = exact ? Agent.takePhasePeak() : nil
        if names.indices.contains(current) {
            boundaryPeak[current] = max(boundaryPeak[current], allocatedBytes)
            recorded.append((current, currentStart, now, exactPhasePeak))
        }
        if names.indices.contains(index) { boundaryPeak[index] = max(boundaryPeak[index], allocatedBytes) }
        currentStart = now
        current = index
    }

    /// The case's peak of each jemalloc figure: the sampler's, with allocated raised to the boundary
    /// readings; only the boundary readings when the sampler was off.
    func peak(with output: SamplerOutput?) -> AllocatorStatsValues {
        var peak = output?.peak ?? AllocatorStatsValues()
        peak.allocatedBytes = max(peak.allocatedBytes, boundaryPeak.max() ?? 0)
        return peak
    }

    /// Every phase that ran, in order, with its peaks from the samples and the boundaries.
    func results(with output: SamplerOutput?) -> [PhaseResult] {
        recorded.map { phase in
            PhaseResult(
                name: names[phase.index], startNanoseconds: phase.start, endNanoseconds: phase.end,
                peakAllocatedBytes: max(output?.phasePeakAllocatedBytes[phase.index] ?? 0, boundaryPeak[phase.index]),
                peakResidentBytes: output?.phasePeakResidentBytes[phase.index] ?? 0,
                exactPeakLiveBytes: phase.exactPeak)
        }
    }
}
