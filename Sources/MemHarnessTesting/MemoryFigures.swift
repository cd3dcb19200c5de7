import HarnessModel
import Verdicts

/// What one memory expectation measured: the harness's figures for the closure, relative to the start.
///
/// Bytes are jemalloc size-class bytes (`stats.allocated`): what the heap really holds, up to 25% above
/// the bytes asked for (a 1 MiB Swift array occupies the 1.25 MiB class). "The start" is the live heap
/// (`stats.allocated` without the freed blocks thread caches hold) after a settle just before the closure's first
/// run, as a harness case's baseline (the same case sequence, `CaseSequence`, measures both).
public struct MemoryFigures: Sendable, Hashable, Codable {
    /// The most the process had allocated at once above the start while the closure ran, bytes: the larger
    /// of `sampledPeakBytes` and `threadPeakBytes`.
    public var peakBytes: Int
    /// The highest live-heap reading above the start, bytes (process-wide: sampled every
    /// `sampling.requestedIntervalNanoseconds`, and read as the runs begin and end): spikes shorter than the
    /// interval can fall between samples.
    public var sampledPeakBytes: Int
    /// The exact high-water mark of the thread the closure ran on (jemalloc's `thread.peak`, within 64 KiB),
    /// bytes; nil when the closure ended on another thread than it started on (an async closure may), and
    /// when other threads freed the thread's blocks (its net figure then says nothing about the heap).
    public var threadPeakBytes: Int?
    /// The live heap after the closure's last run and a settle, minus the start, bytes: what the
    /// closure left allocated (including anything it stored outside itself). May be negative when the
    /// closure freed what existed before it.
    public var residueBytes: Int
    /// The live heap (`stats.allocated` without the freed blocks thread caches hold) at the start, absolute
    /// bytes: everything the process held before the closure ran.
    public var baselineAllocatedBytes: Int
    /// Tracked objects and survivors per type, the live heap after each run, and the uncertainty of the residue
    /// (`leaks.residueUncertaintyBytes`: the harness's own allocations and the reading spreads).
    public var leaks: LeakMeasurements
    /// How many times the closure ran.
    public var iterations: Int
    /// How the process-wide sampler did (samples taken, interval achieved).
    public var sampling: SamplingFigures
    /// Wall time of the closure's runs and the settles between them, nanoseconds.
    public var durationNanoseconds: Int64
    /// How long the heap was let settle before the start and before the residue, nanoseconds.
    public var settleNanoseconds: Int64
    /// Where the closure was measured: in a replica process running only this test, or in this process.
    public var isolation: MemoryIsolation
    /// With `leaks: .none` in a replica that had the agent preloaded: the heap graph after the closure, whose blocks
    /// no root reaches are leaks even where nothing was tracked; nil otherwise (`heapGraphUnavailable` says why).
    public var heapGraph: HeapGraphLeaks?
    /// Why `leaks: .none` had no heap graph (no agent beside the test binary, measured in this process, a capture
    /// that failed); nil when it had one or was not asked for one.
    public var heapGraphUnavailable: String?

    /// Makes figures from their parts (the meter does; tests of messages may too).
    public init(
        peakBytes: Int, sampledPeakBytes: Int, threadPeakBytes: Int? = nil, residueBytes: Int,
        baselineAllocatedBytes: Int = 0, leaks: LeakMeasurements = LeakMeasurements(), iterations: Int = 1,
        sampling: SamplingFigures = SamplingFigures(), durationNanoseconds: Int64 = 0, settleNanoseconds: Int64 = 0,
        isolation: MemoryIsolation = .replica
    ) {
        self.peakBytes = peakBytes
        self.sampledPeakBytes = sampledPeakBytes
        self.threadPeakBytes = threadPeakBytes
        self.residueBytes = residueBytes
        self.baselineAllocatedBytes = baselineAllocatedBytes
        self.leaks = leaks
        self.iterations = iterations
        self.sampling = sampling
        self.durationNanoseconds = durationNanoseconds
        self.settleNanoseconds = settleNanoseconds
        self.isolation = isolation
    }

    /// Tracked objects still alive after the closure and a settle, per type name, sorted by name.
    public var survivors: [TypeCount] { leaks.survivors }

    /// The live heap's growth per run (needs `iterations` of 4 or more: the first run is a warm-up);
    /// nil with fewer runs.
    public var growth: SlopeFit? { leaks.growth.first?.fit }

    /// The figures as leak evidence, the input of the one leak judgement (`LeakJudgement`, as `memharness run` judges
    /// a case): tracked objects and survivors, the live heap per run and per `repeat` iteration, and the heap graph
    /// less what no root reached before the closure.
    public var leakEvidence: LeakEvidence {
        LeakEvidence(source: .closure, measurements: leaks, heap: heapGraph?.evidence)
    }
}

/// Where a memory expectation measures its closure.
public enum MemoryIsolation: String, Sendable, Hashable, Codable {
    /// In a replica: this test binary run again in a child process, filtered to the current test, where the
    /// expectation measures the closure while no other test runs. The figures are honest however tests run.
    case replica
    /// In this process, one expectation at a time. Honest only when no other test runs meanwhile
    /// (`swift test --no-parallel`): jemalloc's figures are process-wide.
    case thisProcess = "this-process"
}
