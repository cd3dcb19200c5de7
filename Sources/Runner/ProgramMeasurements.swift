import Attribution
import Foundation
import WorkloadKit

/// The measurements of an external program, from the agent's sample stream, its record and the kernel.
enum ProgramMeasurements {
    /// The program's one phase: everything from the agent's load to its exit.
    static let phase = "run"

    /// Builds the measurements: the baseline is the first sample (the agent's load, before `main`), the
    /// residue what was still allocated at the last sample (at exit, after the atexit handlers).
    static func build(
        _ samples: ProgramSamples, usage: ChildUsage?, exact: ExactPeakValues?, report: ProgramReport,
        requestedIntervalNanoseconds: Int64
    ) -> CaseMeasurements {
        var series = SampleSeries(phaseNames: [phase], gaugeNames: [])
        var peak = AllocatorStatsValues()
        for row in samples.rows {
            series.timeNanoseconds.append(row.time)
            series.allocatedBytes.append(row.stats.allocatedBytes)
            series.activeBytes.append(row.stats.activeBytes)
            series.residentBytes.append(row.stats.residentBytes)
            series.mappedBytes.append(row.stats.mappedBytes)
            series.retainedBytes.append(row.stats.retainedBytes)
            series.metadataBytes.append(row.stats.metadataBytes)
            series.rssBytes.append(row.rss)
            series.phaseIndex.append(0)
            peak = peak.elementwiseMax(row.stats)
        }
        let first = samples.rows.first
        let last = samples.rows.last
        let start = first?.time ?? 0
        let end = last?.time ?? 0
        let baseline = first?.stats.allocatedBytes ?? 0
        let count = samples.rows.count
        return CaseMeasurements(
            baselineAllocatedBytes: baseline, peak: peak,
            peakRSSBytes: max(usage?.peakRSSBytes ?? 0, series.rssBytes.max() ?? 0),
            residueBytes: samples.exitStatus == nil ? nil : (last?.stats.allocatedBytes ?? baseline) - baseline,
            durationNanoseconds: end - start, cpuNanoseconds: usage?.cpuNanoseconds,
            sampling: SamplingFigures(
                sampleCount: count, requestedIntervalNanoseconds: requestedIntervalNanoseconds,
                achievedIntervalNanoseconds: count > 1 ? (end - start) / Int64(count - 1) : 0),
            phases: [
                PhaseResult(
                    name: phase, startNanoseconds: start, endNanoseconds: end, peakAllocatedBytes: peak.allocatedBytes,
                    peakResidentBytes: peak.residentBytes, exactPeakLiveBytes: exact?.peakLiveBytes)
            ],
            samples: series, exact: exact, program: report)
    }

    /// The exact figures of the agent's record; nil without a record or an `exact` line.
    static func exactFigures(recordFile: String) -> ExactPeakValues? {
        // No record, or one without an exact line: the case has no exact figures (shown as missing), it still ran.
        guard let text = try? String(contentsOfFile: recordFile, encoding: .utf8),
            let exact = (try? AgentRecord.parse(text, source: recordFile))?.exact
        else { return nil }
        return ExactPeakValues(
            baselineLiveBytes: exact.baselineLiveBytes, peakLiveBytes: exact.peakLiveBytes,
            allocationCalls: exact.allocationCalls)
    }

    /// Why the program's memory cannot be seen through jemalloc, when its RSS grew while jemalloc saw
    /// (almost) nothing: a statically linked allocator, Go's runtime, memory from mmap alone.
    static func invisibility(_ samples: ProgramSamples) -> String? {
        guard let first = samples.rows.first else { return nil }
        let rssGrowth = (samples.rows.map(\.rss).max() ?? 0) - first.rss
        let allocatedGrowth = (samples.rows.map(\.stats.allocatedBytes).max() ?? 0) - first.stats.allocatedBytes
        let mallocs = (samples.rows.map(\.mallocCount).max() ?? 0) - max(first.mallocCount, 0)
        // 16 MiB of RSS growth with under 1/16 of it seen as allocations and hardly a malloc: its
        // allocator is not the process's malloc. Below that, RSS noise (code pages, stacks) dominates.
        guard rssGrowth > 16 << 20, allocatedGrowth < rssGrowth / 16, mallocs < 1000 else { return nil }
        return "its resident memory grew by \(Units.formatBytes(rssGrowth)) while jemalloc saw "
            + "\(Units.formatBytes(max(allocatedGrowth, 0))) allocated in \(max(mallocs, 0)) mallocs: it allocates "
            + "through an allocator of its own (statically linked, or a runtime such as Go's), which memharness "
            + "cannot see; measure it with its own tools, or build it to use the system malloc"
    }
}
