/// Everything measured in one case, built once when the case ends.
public struct CaseMeasurements: Sendable, Hashable, Codable {
    /// The allocated figure after the pre-setup settle, bytes: what the harness itself holds. Since
    /// `floor` exists, the allocated figure is the live heap, `stats.allocated` without the freed blocks
    /// held in thread caches; in records without a floor it is `stats.allocated`.
    public let baselineAllocatedBytes: Int
    /// Peak of each jemalloc figure over the case's samples and phase boundaries, absolute bytes.
    public let peak: AllocatorStatsValues
    /// The kernel's RSS high-water mark (`VmHWM`) over the case, bytes.
    public let peakRSSBytes: Int
    /// The allocated figure (see `baselineAllocatedBytes`) after teardown and settle minus the baseline, bytes:
    /// what the case left behind; nil when the case did not tear down.
    public let residueBytes: Int?
    /// Wall time from the start of setup to the end of teardown (or to the stop), nanoseconds.
    public let durationNanoseconds: Int64
    /// CPU time of the case process (every thread) over the same span, nanoseconds; nil when not measured.
    public let cpuNanoseconds: Int64?
    /// How the sampler did.
    public let sampling: SamplingFigures
    /// The phases as far as the case got, in order.
    public let phases: [PhaseResult]
    /// The workload's own figures (callbacks delivered, staleness p99).
    public let metrics: [Metric]
    /// The sampled time series; nil when sampling was off.
    public let samples: SampleSeries?
    /// Surviving tracked objects, growth per `repeat` iteration and residue uncertainty; nil when the case did not tear
    /// down.
    public let leaks: LeakMeasurements?
    /// Exact peaks (`--peak exact`); nil when the case was sampled only.
    public let exact: ExactPeakValues?
    /// Memory warnings posted to the case; nil when warnings were off.
    public let memoryWarnings: Int?
    /// Where the memory is (an attributed case): the symbolized live set at the peak; nil otherwise.
    public let profile: AllocationProfile?
    /// What an external program did (a `command` case): its exit and the tail of its output; nil for workloads.
    public let program: ProgramReport?
    /// The uncertainty of the peaks that the harness cannot remove; nil for external programs, cases that
    /// ended early and records written before it was measured.
    public let floor: MeasurementFloor?
    /// The heap as a graph (`--heap-graph`): what was leaked, the cycles and retaining paths, types per capture; nil
    /// when the heap was not captured.
    public let heapGraph: HeapGraphSummary?

    public init(
        baselineAllocatedBytes: Int, peak: AllocatorStatsValues, peakRSSBytes: Int, residueBytes: Int?,
        durationNanoseconds: Int64, cpuNanoseconds: Int64? = nil, sampling: SamplingFigures = SamplingFigures(),
        phases: [PhaseResult] = [], metrics: [Metric] = [], samples: SampleSeries? = nil,
        leaks: LeakMeasurements? = nil, exact: ExactPeakValues? = nil, memoryWarnings: Int? = nil,
        profile: AllocationProfile? = nil, program: ProgramReport? = nil, floor: MeasurementFloor? = nil,
        heapGraph: HeapGraphSummary? = nil
    ) {
        self.baselineAllocatedBytes = baselineAllocatedBytes
        self.peak = peak
        self.peakRSSBytes = peakRSSBytes
        self.residueBytes = residueBytes
        self.durationNanoseconds = durationNanoseconds
        self.cpuNanoseconds = cpuNanoseconds
        self.sampling = sampling
        self.phases = phases
        self.metrics = metrics
        self.samples = samples
        self.leaks = leaks
        self.exact = exact
        self.memoryWarnings = memoryWarnings
        self.profile = profile
        self.program = program
        self.floor = floor
        self.heapGraph = heapGraph
    }

    /// These measurements with the heap graph captured after them (the capture comes last: it allocates).
    public func adding(heapGraph: HeapGraphSummary?) -> CaseMeasurements {
        CaseMeasurements(
            baselineAllocatedBytes: baselineAllocatedBytes, peak: peak, peakRSSBytes: peakRSSBytes,
            residueBytes: residueBytes, durationNanoseconds: durationNanoseconds, cpuNanoseconds: cpuNanoseconds,
            sampling: sampling, phases: phases, metrics: metrics, samples: samples, leaks: leaks, exact: exact,
            memoryWarnings: memoryWarnings, profile: profile, program: program, floor: floor, heapGraph: heapGraph)
    }

    /// ± of `peakAllocatedNetBytes`, bytes (see `MeasurementFloor`); nil when not measured.
    public var peakUncertaintyBytes: Int? { floor?.peakUncertaintyBytes }

    /// ± of `exactPeakNetBytes`, bytes; nil when sampled only or not measured.
    public var exactPeakUncertaintyBytes: Int? { exact == nil ? nil : floor?.exactPeakUncertaintyBytes }

    /// Peak allocated figure above the baseline (see `baselineAllocatedBytes`), bytes: what the scenario itself
    /// added at its worst.
    public var peakAllocatedNetBytes: Int { peak.allocatedBytes - baselineAllocatedBytes }

    /// The exact peak above its baseline, bytes; nil when the case was sampled only.
    public var exactPeakNetBytes: Int? { exact?.peakNetBytes }

    /// Exact net peak minus sampled net peak, bytes: what the sampler missed between its samples
    /// (spikes shorter than the interval, the top of a loop that never stays there). In records without a
    /// floor, a few KiB either way is thread-cache noise: their sampled figure counted free blocks held in
    /// thread caches, the exact one does not. Nil when sampled only.
    public var spikeExcessBytes: Int? { exactPeakNetBytes.map { $0 - peakAllocatedNetBytes } }

    /// A phase's exact peak above the case's exact baseline, bytes; nil when the case was sampled only.
    public func exactPeakNetBytes(of phase: PhaseResult) -> Int? {
        guard let exact, let live = phase.exactPeakLiveBytes else { return nil }
        return live - exact.baselineLiveBytes
    }

    /// A metric by name.
    public func metric(_ name: String) -> Metric? { metrics.first { $0.name == name } }

    /// The same measurements with another time series (thinned for the record, or none).
    public func replacingSamples(_ samples: SampleSeries?) -> CaseMeasurements {
        CaseMeasurements(
            baselineAllocatedBytes: baselineAllocatedBytes, peak: peak, peakRSSBytes: peakRSSBytes,
            residueBytes: residueBytes, durationNanoseconds: durationNanoseconds, cpuNanoseconds: cpuNanoseconds,
            sampling: sampling, phases: phases, metrics: metrics, samples: samples, leaks: leaks, exact: exact,
            memoryWarnings: memoryWarnings, profile: profile, program: program, floor: floor, heapGraph: heapGraph)
    }

    /// The same measurements with a profile (the runner symbolizes the record after the case ends).
    public func replacingProfile(_ profile: AllocationProfile?) -> CaseMeasurements {
        CaseMeasurements(
            baselineAllocatedBytes: baselineAllocatedBytes, peak: peak, peakRSSBytes: peakRSSBytes,
            residueBytes: residueBytes, durationNanoseconds: durationNanoseconds, cpuNanoseconds: cpuNanoseconds,
            sampling: sampling, phases: phases, metrics: metrics, samples: samples, leaks: leaks, exact: exact,
            memoryWarnings: memoryWarnings, profile: profile, program: program, floor: floor, heapGraph: heapGraph)
    }
}
