import HarnessModel
import WorkloadKit

/// The phases of a case as it crosses their boundaries: when each began and ended, and the
/// allocated bytes read at each boundary (so a phase shorter than the sampling interval still has a peak).
///
/// Its storage is reserved when it is made, before the case's baseline: recording a boundary allocates nothing.
struct PhaseRecorder {
    let names: [String]
    let exact: Bool
    /// The peaks of the boundary readings, each counted in the phase it ends and in the one it starts.
    private var boundaryPeaks: Peaks
    private var recorded: [(index: Int, start: Int64, end: Int64, exactPeak: Int?)] = []
    private var current = -1
    private var currentStart: Int64 = 0

    init(names: [String], exact: Bool) {
        self.names = names
        self.exact = exact
        boundaryPeaks = Peaks(phaseCount: names.count)
        recorded.reserveCapacity(names.count + 1)
    }

    /// Ends the current phase and starts phase `index` (`names.count` ends the last one), with the live
    /// heap read at the boundary (`allocatedBytes`, confirmed by a second reading `spreadBytes` apart).
    mutating func enter(_ index: Int, allocatedBytes: Int, spreadBytes: Int = 0, atNanoseconds now: Int64) {
        let exactPhasePeak = exact ? Agent.takePhasePeak() : nil
        let reading = AllocatorStatsValues(allocatedBytes: allocatedBytes)
        if names.indices.contains(current) {
            boundaryPeaks.record(reading, phase: current, spreadBytes: spreadBytes)
            recorded.append((current, currentStart, now, exactPhasePeak))
        }
        if names.indices.contains(index) { boundaryPeaks.record(reading, phase: index, spreadBytes: spreadBytes) }
        currentStart = now
        current = index
    }

    /// The case's peaks: the sampler's, with allocated raised to the boundary readings (on a tie the sample
    /// and its spread stand); only the boundary readings when the sampler was off.
    func peaks(with output: SamplerOutput?) -> Peaks {
        (output?.peaks ?? Peaks(phaseCount: names.count)).merging(boundaryPeaks)
    }

    /// Every phase that ran, in order, with its peaks (`peaks(with:)`).
    func results(with peaks: Peaks) -> [PhaseResult] {
        recorded.map { phase in
            let figures = peaks.phases[phase.index]
            return PhaseResult(
                name: names[phase.index], startNanoseconds: phase.start, endNanoseconds: phase.end,
                peakAllocatedBytes: figures.stats.allocatedBytes, peakResidentBytes: figures.stats.residentBytes,
                exactPeakLiveBytes: phase.exactPeak, peakReadingSpreadBytes: figures.allocatedSpreadBytes)
        }
    }
}
