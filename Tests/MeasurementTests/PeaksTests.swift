import HarnessModel
import Measurement
import Testing

/// The one peak computation, on made-up readings and series.
@Suite struct PeaksTests {
    private func stats(_ allocated: Int, resident: Int = 0, mapped: Int = 0) -> AllocatorStatsValues {
        AllocatorStatsValues(allocatedBytes: allocated, residentBytes: resident, mappedBytes: mapped)
    }

    /// A series of `rows` (allocated, resident, rss, phase), one row per millisecond.
    private func series(_ rows: [(allocated: Int, resident: Int, rss: Int, phase: Int)]) -> SampleSeries {
        var series = SampleSeries(phaseNames: ["setup", "burst", "teardown"], gaugeNames: [])
        for (index, row) in rows.enumerated() {
            series.timeNanoseconds.append(Int64(index) * 1_000_000)
            series.allocatedBytes.append(row.allocated)
            series.activeBytes.append(row.allocated)
            series.residentBytes.append(row.resident)
            series.mappedBytes.append(row.resident * 2)
            series.retainedBytes.append(0)
            series.metadataBytes.append(7)
            series.rssBytes.append(row.rss)
            series.phaseIndex.append(row.phase)
        }
        return series
    }

    @Test func eachFigureKeepsItsOwnHighestAndEachPhaseItsOwn() {
        let peaks = Peaks(
            series: series([
                (10, 300, 1000, 0), (40, 100, 900, 0), (90, 200, 800, 1), (30, 500, 700, 1), (20, 50, 2000, 2),
            ]))
        // Overall: the highest of each figure, from different rows.
        #expect(peaks.overall.stats.allocatedBytes == 90)
        #expect(peaks.overall.stats.residentBytes == 500)
        #expect(peaks.overall.stats.mappedBytes == 1000)
        #expect(peaks.overall.stats.metadataBytes == 7)
        #expect(peaks.overall.rssBytes == 2000)
        #expect(peaks.overall.readings == 5)
        #expect(peaks.phases.map(\.stats.allocatedBytes) == [40, 90, 20])
        #expect(peaks.phases.map(\.stats.residentBytes) == [300, 500, 50])
        #expect(peaks.phases.map(\.rssBytes) == [1000, 800, 2000])
        #expect(peaks.phases.map(\.readings) == [2, 2, 1])
    }

    @Test func anEmptySeriesHasZeroPeaksAndNoPhases() {
        let empty = series([])
        let peaks = Peaks(series: empty)
        #expect(peaks.overall == PeakFigures())
        #expect(peaks.phases == [PeakFigures](repeating: PeakFigures(), count: 3))
        #expect(peaks.phaseResults(spannedBy: empty, endNanoseconds: 5).isEmpty)
    }

    @Test func oneSampleIsThePeakOfItsPhaseAndOverall() {
        let one = series([(64, 128, 256, 1)])
        let peaks = Peaks(series: one)
        #expect(peaks.overall.stats.allocatedBytes == 64)
        #expect(peaks.overall.rssBytes == 256)
        #expect(peaks.phases.map(\.stats.allocatedBytes) == [0, 64, 0])
        let results = peaks.phaseResults(spannedBy: one, endNanoseconds: 9_000_000)
        #expect(results.map(\.name) == ["burst"])
        #expect(results.first?.startNanoseconds == 0 && results.first?.endNanoseconds == 9_000_000)
        #expect(results.first?.peakAllocatedBytes == 64 && results.first?.peakResidentBytes == 128)
    }

    @Test func readingsOutsideThePhasesCountOverallOnly() {
        var peaks = Peaks(phaseCount: 2)
        peaks.record(stats(500), phase: -1)
        peaks.record(stats(20), phase: 0)
        peaks.record(stats(700), phase: 2)
        #expect(peaks.overall.stats.allocatedBytes == 700)
        #expect(peaks.phases.map(\.stats.allocatedBytes) == [20, 0])
    }

    @Test func theSpreadIsTheOneOfTheReadingThatSetTheAllocatedPeak() {
        var peaks = Peaks(phaseCount: 1)
        peaks.record(stats(100), phase: 0, spreadBytes: 5)
        peaks.record(stats(100, resident: 900), phase: 0, spreadBytes: 50)  // a tie: the first reading stands
        peaks.record(stats(90), phase: 0, spreadBytes: 70)
        #expect(peaks.overall.allocatedSpreadBytes == 5)
        peaks.record(stats(101), phase: 0, spreadBytes: 8)
        #expect(peaks.overall.allocatedSpreadBytes == 8)
        #expect(peaks.phases[0].allocatedSpreadBytes == 8)
        #expect(peaks.overall.stats.residentBytes == 900)
    }

    @Test func aNewPeakIsOneAboveTheOverallOrItsPhasesPeak() {
        var peaks = Peaks(phaseCount: 2)
        peaks.record(stats(100), phase: 0)
        #expect(peaks.raisesAllocatedPeak(101, phase: 0))
        #expect(!peaks.raisesAllocatedPeak(100, phase: 0))
        // Below the overall peak, but the first reading of phase 1.
        #expect(peaks.raisesAllocatedPeak(50, phase: 1))
        #expect(!peaks.raisesAllocatedPeak(50, phase: 7))
    }

    /// Phase boundaries: a phase shorter than the sampling interval has no sample, but the readings taken as it
    /// began and ended give it a peak; a sample at the same figure keeps its spread.
    @Test func boundaryReadingsRaisePhasesTheSamplesMissed() {
        var sampled = Peaks(phaseCount: 3)
        sampled.record(stats(100, resident: 400), rssBytes: 900, phase: 0, spreadBytes: 1)
        sampled.record(stats(60, resident: 300), rssBytes: 800, phase: 2, spreadBytes: 2)
        var boundaries = Peaks(phaseCount: 3)
        // Phase 1 starts at 80 and ends at 250 (between two samples); phase 2 starts at 250 too.
        boundaries.record(stats(80), phase: 0, spreadBytes: 30)
        boundaries.record(stats(80), phase: 1, spreadBytes: 30)
        boundaries.record(stats(250), phase: 1, spreadBytes: 40)
        boundaries.record(stats(250), phase: 2, spreadBytes: 40)
        boundaries.record(stats(100), phase: 0, spreadBytes: 99)
        let peaks = sampled.merging(boundaries)
        #expect(peaks.overall.stats.allocatedBytes == 250)
        #expect(peaks.overall.allocatedSpreadBytes == 40)
        #expect(peaks.overall.stats.residentBytes == 400)
        #expect(peaks.overall.rssBytes == 900)
        #expect(peaks.phases.map(\.stats.allocatedBytes) == [100, 250, 250])
        // Phase 0's sample ties its boundary reading: the sample stands, with its spread.
        #expect(peaks.phases.map(\.allocatedSpreadBytes) == [1, 40, 40])
        #expect(peaks.phases.map(\.stats.residentBytes) == [400, 0, 300])
        #expect(peaks.phases.map(\.readings) == [3, 2, 2])
    }

    @Test func phasesSpanFromTheirFirstRowToTheNextPhasesFirst() {
        let rows = series([(1, 0, 0, -1), (2, 0, 0, 0), (3, 0, 0, 0), (4, 0, 0, 2), (5, 0, 0, 3)])
        let results = Peaks(series: rows).phaseResults(spannedBy: rows, endNanoseconds: 10_000_000)
        #expect(results.map(\.name) == ["setup", "teardown"])
        #expect(results.map(\.startNanoseconds) == [1_000_000, 3_000_000])
        #expect(results.map(\.endNanoseconds) == [3_000_000, 4_000_000])
        #expect(results.map(\.peakAllocatedBytes) == [3, 4])
    }

    @Test func statsValuesAddSubtractAndClampFieldByField() {
        let a = AllocatorStatsValues(
            allocatedBytes: 10, activeBytes: 20, residentBytes: 30, mappedBytes: 40, retainedBytes: 50,
            metadataBytes: 60)
        let b = AllocatorStatsValues(
            allocatedBytes: 1, activeBytes: 25, residentBytes: 3, mappedBytes: 45, retainedBytes: 5, metadataBytes: 66)
        #expect(
            a + b
                == AllocatorStatsValues(
                    allocatedBytes: 11, activeBytes: 45, residentBytes: 33, mappedBytes: 85, retainedBytes: 55,
                    metadataBytes: 126))
        #expect(
            (a - b).clampedAtZero
                == AllocatorStatsValues(
                    allocatedBytes: 9, activeBytes: 0, residentBytes: 27, mappedBytes: 0, retainedBytes: 45,
                    metadataBytes: 0))
        #expect(
            a.elementwiseMax(b)
                == AllocatorStatsValues(
                    allocatedBytes: 10, activeBytes: 25, residentBytes: 30, mappedBytes: 45, retainedBytes: 50,
                    metadataBytes: 66))
    }
}
