import HarnessModel

/// A mutable stand-in for `CaseMeasurements` (which is built once and immutable), for tests that
/// describe a case figure by figure.
public struct MeasurementsDraft {
    public var baselineAllocatedBytes = 0
    public var peak = AllocatorStatsValues()
    public var peakRSSBytes = 0
    public var residueBytes: Int? = 0
    public var durationNanoseconds: Int64 = 0
    public var cpuNanoseconds: Int64?
    public var sampling = SamplingFigures()
    public var phases: [PhaseResult] = []
    public var metrics: [Metric] = []
    public var samples: SampleSeries?
    public var leaks: LeakMeasurements?
    public var exact: ExactPeakValues?
    public var memoryWarnings: Int?
    public var floor: MeasurementFloor?
    public var heapGraph: HeapGraphSummary?

    public init() {}

    /// A draft of existing measurements, to change a figure or two.
    public init(_ m: CaseMeasurements) {
        baselineAllocatedBytes = m.baselineAllocatedBytes
        peak = m.peak
        peakRSSBytes = m.peakRSSBytes
        residueBytes = m.residueBytes
        durationNanoseconds = m.durationNanoseconds
        cpuNanoseconds = m.cpuNanoseconds
        sampling = m.sampling
        phases = m.phases
        metrics = m.metrics
        samples = m.samples
        leaks = m.leaks
        exact = m.exact
        memoryWarnings = m.memoryWarnings
        floor = m.floor
        heapGraph = m.heapGraph
    }

    public var measurements: CaseMeasurements {
        CaseMeasurements(
            baselineAllocatedBytes: baselineAllocatedBytes, peak: peak, peakRSSBytes: peakRSSBytes,
            residueBytes: residueBytes, durationNanoseconds: durationNanoseconds, cpuNanoseconds: cpuNanoseconds,
            sampling: sampling, phases: phases, metrics: metrics, samples: samples, leaks: leaks, exact: exact,
            memoryWarnings: memoryWarnings, floor: floor, heapGraph: heapGraph)
    }
}

extension CaseResult {
    /// A case of `status` whose measurements `build` describes. Crashed and timed-out cases keep
    /// measurements only when the draft has samples (`sampling.sampleCount > 0`); a killed case gets
    /// `hit` (a 256 MiB limit crossed at 1 s by default).
    public static func draft(
        scenario: String = "s", workload: String = "w", strategy: String, repetition: Int = 1,
        status: CaseStatus = .ok, failure: String? = nil, expectation: LeakExpectation? = nil,
        hit: MemoryLimitHit = MemoryLimitHit(
            timeNanoseconds: 1_000_000_000, footprintBytes: 257 << 20, limitBytes: 256 << 20, footprint: .allocated,
            warningsBefore: 0),
        _ build: (inout MeasurementsDraft) -> Void = { _ in }
    ) -> CaseResult {
        var draft = MeasurementsDraft()
        build(&draft)
        let m = draft.measurements
        let partial = draft.sampling.sampleCount > 0 ? m : nil
        let outcome: CaseOutcome
        switch status {
        case .ok: outcome = .completed(measurements: m)
        case .failed: outcome = .failed(reason: failure ?? "the workload threw", measurements: m)
        case .crashed:
            outcome = .crashed(
                crash: CaseCrash(signal: 6, signalName: "SIGABRT", message: failure ?? ""), measurements: partial)
        case .timedOut: outcome = .timedOut(limitNanoseconds: 120_000_000_000, measurements: partial)
        case .killedByMemoryLimit: outcome = .killedByMemoryLimit(hit: hit, measurements: m)
        case .notMeasured: outcome = .notMeasured(reason: failure ?? "not measured")
        }
        return CaseResult(
            scenario: scenario, workload: workload, strategy: strategy, repetition: repetition,
            expectation: expectation,
            outcome: outcome)
    }
}

extension CaseResult {
    /// The same case with its measurements changed by `change` (a completed case only; others unchanged).
    public func changingMeasurements(_ change: (inout MeasurementsDraft) -> Void) -> CaseResult {
        guard case .completed(let m) = outcome else { return self }
        var draft = MeasurementsDraft(m)
        change(&draft)
        var copy = self
        copy.outcome = .completed(measurements: draft.measurements)
        return copy
    }
}
