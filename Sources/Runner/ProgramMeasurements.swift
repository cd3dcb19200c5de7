import Attribution
import ChildProcesses
import Foundation
import HarnessModel
import Measurement
import WorkloadKit

/// The measurements of an external program, from the agent's sample stream, its record and the kernel.
enum ProgramMeasurements {
    /// The program's one phase: everything from the agent's load to its exit.
    static let phase = "run"

    /// Builds the measurements: the baseline is the first sample (the agent's load, before `main`), the
    /// residue what was still allocated at the last sample (at exit, after the atexit handlers).
    /// `harnessRSSBytes` is this process's resident set when it forked the program (see `peakRSS`).
    static func build(
        _ samples: ProgramSamples, usage: ChildUsage?, harnessRSSBytes: Int, exact: ExactPeakValues?,
        report: ProgramReport, requestedIntervalNanoseconds: Int64, phases spans: [PhaseSpan]? = nil,
        metrics: [Metric] = []
    ) -> CaseMeasurements {
        let series = samples.series(phases: spans)
        let peaks = phasePeaks(samples, series: series, spans: spans)
        let peak = peaks.overall
        let first = samples.rows.first
        let last = samples.rows.last
        let start = first?.time ?? 0
        let end = last?.time ?? 0
        let baseline = first?.stats.allocatedBytes ?? 0
        // The interval is the sampler's in each process: a tree's merged rows come more often than that.
        let count = samples.startedProcessRowCount ?? samples.rows.count
        let rss = peakRSS(
            kernelBytes: usage?.peakRSSBytes, sampledBytes: peak.rssBytes, harnessRSSBytes: harnessRSSBytes)
        var report = report
        report.residentBeyondAllocator = residentBeyondAllocator(samples)
        // The started process's own (a tree's merged stream keeps the started process's explanations).
        let explained = samples.residentAtPeakAndEnd
        report.residentExplained = explained.isEmpty ? nil : explained
        report.allocator = samples.allocator
        return CaseMeasurements(
            baselineAllocatedBytes: baseline, peak: peak.stats, peakRSSBytes: rss,
            residueBytes: samples.exitStatus == nil ? nil : (last?.stats.allocatedBytes ?? baseline) - baseline,
            durationNanoseconds: end - start, cpuNanoseconds: usage?.cpuNanoseconds,
            sampling: SamplingFigures(
                sampleCount: count, requestedIntervalNanoseconds: requestedIntervalNanoseconds,
                achievedIntervalNanoseconds: count > 1 ? (end - start) / Int64(count - 1) : 0),
            phases: spans.map { spans in
                zip(spans, peaks.phases).map { span, peak in
                    PhaseResult(
                        name: span.name, startNanoseconds: span.start, endNanoseconds: span.end,
                        peakAllocatedBytes: peak.stats.allocatedBytes, peakResidentBytes: peak.stats.residentBytes,
                        exactPeakLiveBytes: samples.exactHighLiveBytes(from: span.start, to: span.end))
                }
            } ?? [
                PhaseResult(
                    name: phase, startNanoseconds: start, endNanoseconds: end,
                    peakAllocatedBytes: peak.stats.allocatedBytes,
                    peakResidentBytes: peak.stats.residentBytes, exactPeakLiveBytes: exact?.peakLiveBytes)
            ],
            metrics: metrics + explained.flatMap(\.metrics), samples: series, exact: exact, program: report)
    }

    /// The peaks overall and per phase. A phase no sample fell in (shorter than the interval) has the last sample
    /// before it: what the program held as the phase began.
    static func phasePeaks(_ samples: ProgramSamples, series: SampleSeries, spans: [PhaseSpan]?) -> Peaks {
        var peaks = Peaks(series: series)
        for (index, span) in (spans ?? []).enumerated() where !series.phaseIndex.contains(index) {
            guard let before = samples.rows.last(where: { $0.time < span.start }) else { continue }
            peaks.record(before.stats, rssBytes: before.rss, phase: index)
        }
        return peaks
    }

    /// The program's resident-set peak, bytes. The kernel's high-water mark (`ru_maxrss`) is exact but keeps
    /// the resident set the program had as a fork of the harness, before its exec: when it is not above the
    /// harness's (plus 1 MiB for what the harness grew meanwhile), it may be the harness's, and the highest
    /// resident set the agent sampled inside the program is the figure.
    static func peakRSS(kernelBytes: Int?, sampledBytes: Int, harnessRSSBytes: Int) -> Int {
        guard let kernelBytes, kernelBytes > harnessRSSBytes + (1 << 20) else { return sampledBytes }
        return max(kernelBytes, sampledBytes)
    }

    /// Process `processID` with the exact figures of its agent's record; no figures without a record or an
    /// `exact` line.
    static func processPeak(processID: Int, recordFile: String) -> ProcessExactPeak {
        // No record, or one without an exact line: the case has no exact figures (shown as missing), it still ran.
        guard let text = try? String(contentsOfFile: recordFile, encoding: .utf8),
            let record = try? AgentRecord.parse(text, source: recordFile)
        else { return ProcessExactPeak(processID: processID, executable: nil, exact: nil) }
        let exact = record.exact.map {
            ExactPeakValues(
                baselineLiveBytes: $0.baselineLiveBytes, peakLiveBytes: $0.peakLiveBytes,
                allocationCalls: $0.allocationCalls)
        }
        return ProcessExactPeak(processID: processID, executable: record.program, exact: exact)
    }

    /// The exact figures of a program's processes, the started one first: its own for one process; for a tree the
    /// sum of every process's peak above its start added to the started one's (labelled with the count: an upper
    /// bound, the processes' peaks need not coincide); nil when any process left no figures.
    static func treeExact(_ processes: [ProcessExactPeak]) -> ExactPeakValues? {
        guard let root = processes.first?.exact else { return nil }
        let others = processes.dropFirst().compactMap(\.exact)
        guard others.count == processes.count - 1 else { return nil }
        guard !others.isEmpty else { return root }
        return ExactPeakValues(
            baselineLiveBytes: root.baselineLiveBytes,
            peakLiveBytes: root.peakLiveBytes + others.reduce(0) { $0 + $1.peakNetBytes },
            allocationCalls: root.allocationCalls + others.reduce(0) { $0 + $1.allocationCalls },
            summedProcessCount: processes.count)
    }

    /// How far the anonymous resident set may exceed the allocator's resident bytes before the report says so: twice
    /// the allocator's and 32 MiB more. Below that, thread stacks and the C library's own mappings explain it.
    static let residentExcessMinimumBytes = 32 << 20

    /// The program's anonymous resident peak and the allocator's resident peak when the first far exceeds the second:
    /// memory held outside malloc (a runtime's own heap, mmap); nil otherwise, and nil for streams without the
    /// anonymous figure. Mapped code and files are not anonymous: a large binary's pages never count here.
    static func residentBeyondAllocator(_ samples: ProgramSamples) -> ResidentBeyondAllocator? {
        guard let peakAnonymous = samples.rows.compactMap(\.anonymousRSS).max() else { return nil }
        return residentBeyondAllocator(
            peakAnonymousBytes: peakAnonymous,
            peakAllocatorResidentBytes: samples.rows.map(\.stats.residentBytes).max() ?? 0,
            peakAllocatedBytes: Peaks(series: samples.series).overall.stats.allocatedBytes)
    }

    /// The figures of the warning when the anonymous peak far exceeds the allocator's resident peak; nil otherwise.
    static func residentBeyondAllocator(
        peakAnonymousBytes: Int, peakAllocatorResidentBytes: Int, peakAllocatedBytes: Int
    ) -> ResidentBeyondAllocator? {
        guard peakAnonymousBytes > 2 * peakAllocatorResidentBytes,
            peakAnonymousBytes - peakAllocatorResidentBytes > residentExcessMinimumBytes
        else { return nil }
        return ResidentBeyondAllocator(
            peakAnonymousBytes: peakAnonymousBytes, peakAllocatorResidentBytes: peakAllocatorResidentBytes,
            peakAllocatedBytes: peakAllocatedBytes)
    }

    /// Why the program's memory cannot be seen through the allocator, when its RSS grew while the allocator saw
    /// (almost) nothing: a statically linked allocator, Go's runtime, memory from mmap alone.
    static func invisibility(_ samples: ProgramSamples) -> String? {
        guard let first = samples.rows.first else { return nil }
        let peak = Peaks(series: samples.series).overall
        let rssGrowth = peak.rssBytes - first.rss
        let allocatedGrowth = peak.stats.allocatedBytes - first.stats.allocatedBytes
        let mallocs = (samples.rows.map(\.mallocCount).max() ?? 0) - max(first.mallocCount, 0)
        // 16 MiB of RSS growth with under 1/16 of it seen as allocations and hardly a malloc: its
        // allocator is not the process's malloc. Below that, RSS noise (code pages, stacks) dominates.
        guard rssGrowth > 16 << 20, allocatedGrowth < rssGrowth / 16, mallocs < 1000 else { return nil }
        // glibc counts no mallocs (-1): its figure is left out.
        let allocator = samples.allocator == .glibc ? "glibc's malloc" : "jemalloc"
        let calls = first.mallocCount < 0 ? "" : " in \(max(mallocs, 0)) mallocs"
        return "its resident memory grew by \(Units.formatBytes(rssGrowth)) while \(allocator) saw "
            + "\(Units.formatBytes(max(allocatedGrowth, 0))) allocated\(calls): it allocates "
            + "through an allocator of its own (statically linked, or a runtime such as Go's), which memharness "
            + "cannot see; measure it with its own tools, or build it to use the system malloc"
    }
}

extension ProgramSamples {
    /// The rows as a series of the program's one phase (`ProgramMeasurements.phase`).
    var series: SampleSeries { series(phases: nil) }

    /// The rows as a series of `phases` (a served program's: each row in the last phase begun at its time, the
    /// first phase for rows before it), or of the program's one phase when nil.
    func series(phases spans: [PhaseSpan]?) -> SampleSeries {
        let names = spans?.map(\.name) ?? [ProgramMeasurements.phase]
        var series = SampleSeries(phaseNames: names, gaugeNames: [])
        for row in rows {
            series.timeNanoseconds.append(row.time)
            series.allocatedBytes.append(row.stats.allocatedBytes)
            series.activeBytes.append(row.stats.activeBytes)
            series.residentBytes.append(row.stats.residentBytes)
            series.mappedBytes.append(row.stats.mappedBytes)
            series.retainedBytes.append(row.stats.retainedBytes)
            series.metadataBytes.append(row.stats.metadataBytes)
            series.rssBytes.append(row.rss)
            series.phaseIndex.append(max((spans ?? []).lastIndex { $0.start <= row.time } ?? 0, 0))
        }
        return series
    }

    /// The streams of a program's processes as one: the process started, as it is, plus what every other
    /// process of its tree (the commands a script runs, a build's compilers) had allocated above its own first
    /// sample while it ran, at each moment any of them sampled. A process started with exec counts from its
    /// agent's load (its whole heap); a fork without exec from the copy of its parent's heap it began with.
    /// Samples after the process started has ended are left out; the exit status is its.
    static func tree(root: ProgramSamples, others: [ProgramSamples]) -> ProgramSamples {
        guard let first = root.rows.first?.time, let last = root.rows.last?.time, !others.isEmpty else { return root }
        /// One process's contribution from `time` on; nil: it has ended and contributes nothing.
        struct Event {
            var time: Int64
            var process: Int
            var row: Row?
            /// The order of the event in its process's stream, for two samples of one process at one time.
            var order: Int
        }
        var events = root.rows.enumerated().map { Event(time: $1.time, process: 0, row: $1, order: $0) }
        for (index, stream) in others.enumerated() {
            guard let start = stream.rows.first, let end = stream.rows.last else { continue }
            for (order, row) in stream.rows.enumerated() where row.time >= first && row.time <= last {
                events.append(Event(time: row.time, process: index + 1, row: row.growth(above: start), order: order))
            }
            // Its last sample is taken at its exit: from the next nanosecond on it holds nothing.
            if end.time >= first && end.time < last {
                events.append(Event(time: end.time + 1, process: index + 1, row: nil, order: stream.rows.count))
            }
        }
        events.sort { ($0.time, $0.process, $0.order) < ($1.time, $1.process, $1.order) }
        var current = [Row?](repeating: nil, count: others.count + 1)
        var total = Row(time: 0, stats: AllocatorStatsValues(), rss: 0, mallocCount: 0)
        var merged = ProgramSamples(
            rows: [], residentExplained: root.residentExplained, exitStatus: root.exitStatus,
            allocator: root.allocator, startedProcessRowCount: root.rows.count)
        for (index, event) in events.enumerated() {
            if let previous = current[event.process] { total = total.adding(previous, sign: -1) }
            if let row = event.row { total = total.adding(row, sign: 1) }
            current[event.process] = event.row
            guard index + 1 == events.count || events[index + 1].time != event.time else { continue }
            total.time = event.time
            merged.rows.append(total)
        }
        return merged
    }
}

extension ProgramSamples.Row {
    /// What this sample holds above `start`, figure by figure. Clamped at zero: a forked process that frees
    /// blocks it inherited frees nothing its parent holds.
    func growth(above start: Self) -> Self {
        Self(
            time: time, stats: (stats - start.stats).clampedAtZero, rss: max(rss - start.rss, 0),
            // -1 is "unknown" in the stream: no count, no growth.
            mallocCount: start.mallocCount < 0 || mallocCount < 0 ? 0 : max(mallocCount - start.mallocCount, 0))
    }

    /// This sample plus (`sign` 1) or minus (-1) `other`, figure by figure; the time stays this one's.
    func adding(_ other: Self, sign: Int) -> Self {
        Self(
            time: time, stats: sign < 0 ? stats - other.stats : stats + other.stats, rss: rss + sign * other.rss,
            mallocCount: mallocCount + sign * other.mallocCount)
    }
}
