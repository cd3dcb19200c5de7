import HarnessModel
import WorkloadKit

/// The phases of a case as it crosses their boundaries: when each began and ended, and the
/// allocated bytes read at each boundary (so a phase shorter than the sampling interval still has a peak).
///
/// Its storage is reserved when it is made, before the case's baseline: recording a boundary allocates nothing.
struct PhaseRecorder {
    let names: [String]
    let exact: Bool
    /// Highest boundary reading of each phase, and how far the two readings that confirmed it disagreed.
    private var boundaryPeak: [Int]
    private var boundarySpread: [Int]
    private var recorded: [(index: Int, start: Int64, end: Int64, exactPeak: Int?)] = []
    private var current = -1
    private var currentStart: Int64 = 0

    init(names: [String], exact: Bool) {
        self.names = names
        self.exact = exact
        boundaryPeak = [Int](repeating: 0, count: names.count)
        boundarySpread = [Int](repeating: 0, count: names.count)
        recorded.reserveCapacity(names.count + 1)
    }

    /// Ends the current phase and starts phase `index` (`names.count` ends the last one), with the live
    /// heap read at the boundary (`allocatedBytes`, confirmed by a second reading `spreadBytes` apart).
    mutating func enter(_ index: Int, allocatedBytes: Int, spreadBytes: Int = 0, atNanoseconds now: Int64) {
        let exactPhasePeak = exact ? Agent.takePhasePeak() : nil
        if names.indices.contains(current) {
            raise(current, allocatedBytes, spreadBytes)
            recorded.append((current, currentStart, now, exactPhasePeak))
        }
        if names.indices.contains(index) { raise(index, allocatedBytes, spreadBytes) }
        currentStart = now
        current = index
    }

    private mutating func raise(_ phase: Int, _ allocatedBytes: Int, _ spreadBytes: Int) {
        guard allocatedBytes > boundaryPeak[phase] else { return }
        boundaryPeak[phase] = allocatedBytes
        boundarySpread[phase] = spreadBytes
    }

    /// The case's peak of each jemalloc figure: the sampler's, with allocated raised to the boundary
    /// readings; only the boundary readings when the sampler was off. `spreadBytes`: how far the two
    /// readings that set the allocated peak disagreed.
    func peak(with output: SamplerOutput?) -> (stats: AllocatorStatsValues, spreadBytes: Int) {
        var peak = output?.peak ?? AllocatorStatsValues()
        var spread = output?.peakSpreadBytes ?? 0
        if let phase = boundaryPeak.indices.max(by: { boundaryPeak[$0] < boundaryPeak[$1] }),
            boundaryPeak[phase] > peak.allocatedBytes
        {
            peak.allocatedBytes = boundaryPeak[phase]
            spread = boundarySpread[phase]
        }
        return (peak, spread)
    }

    /// Every phase that ran, in order, with its peaks from the samples and the boundaries.
    func results(with output: SamplerOutput?) -> [PhaseResult] {
        recorded.map { phase in
            let sampled = output?.phasePeakAllocatedBytes[phase.index] ?? 0
            let boundary = boundaryPeak[phase.index]
            return PhaseResult(
                name: names[phase.index], startNanoseconds: phase.start, endNanoseconds: phase.end,
                peakAllocatedBytes: max(sampled, boundary),
                peakResidentBytes: output?.phasePeakResidentBytes[phase.index] ?? 0,
                exactPeakLiveBytes: phase.exactPeak,
                peakReadingSpreadBytes: sampled >= boundary
                    ? output?.phasePeakSpreadBytes[phase.index] ?? 0 : boundarySpread[phase.index])
        }
    }
}
