/// One case of a run (a scenario × a strategy × a repetition) and what happened to it.
public struct CaseResult: Sendable, Hashable, Codable {
    /// The scenario's name (with the sweep point for a sweep: `live-query @ burst.duration=2s`).
    public var scenario: String
    public var workload: String
    public var strategy: String
    /// Repetition number, from 1.
    public var repetition: Int
    /// The leak expectation the scenario file states for this strategy, if any.
    public var expectation: LeakExpectation?
    /// What happened, with what was measured.
    public var outcome: CaseOutcome

    public init(
        scenario: String, workload: String, strategy: String, repetition: Int,
        expectation: LeakExpectation? = nil, outcome: CaseOutcome
    ) {
        self.scenario = scenario
        self.workload = workload
        self.strategy = strategy
        self.repetition = repetition
        self.expectation = expectation
        self.outcome = outcome
    }

    /// The outcome's kind, as `summary.csv` and the report spell it.
    public var status: CaseStatus { outcome.status }

    /// Why the case did not complete, in plain words; nil when it completed.
    public var failure: String? { outcome.failure }

    /// Whatever was measured, whether or not the case completed (a killed case has its samples up to the kill).
    public var measurements: CaseMeasurements? { outcome.measurements }

    /// The measurements of a completed case: the only ones medians, rankings and gates use.
    public var completed: CaseMeasurements? {
        if case .completed(let measurements) = outcome { return measurements }
        return nil
    }

    /// A metric of the measurements, by name.
    public func metric(_ name: String) -> Metric? { measurements?.metric(name) }

    /// True for the extra case of a strategy that recorded allocation stacks: its figures never gate.
    public var attributed = false

    /// Wall time the case took, its process's start and end included, nanoseconds; nil in records
    /// written before it was kept.
    public var wallNanoseconds: Int64? = nil

    /// `live-query / signal-next #2`, for progress lines and messages (`#stacks` for the attributed case).
    public var label: String { "\(scenario) / \(strategy) #\(attributed ? "stacks" : String(repetition))" }
}

/// What happened to a case. Every kind carries what it needs and nothing it cannot have.
public enum CaseOutcome: Sendable, Hashable, Codable {
    /// Every step ran, the case tore down and settled.
    case completed(measurements: CaseMeasurements)
    /// The workload threw; the measurements cover what ran, teardown included.
    case failed(reason: String, measurements: CaseMeasurements)
    /// Stopped at the first sample whose footprint crossed the memory limit, as a phone stops an app;
    /// the measurements end at that sample (no teardown, no residue).
    case killedByMemoryLimit(hit: MemoryLimitHit, measurements: CaseMeasurements)
    /// Stopped at the per-case time limit; the samples it had taken, when the case process left them.
    case timedOut(limitNanoseconds: Int64, measurements: CaseMeasurements?)
    /// The case process died of a signal it did not ask for; its samples up to then, when it left them.
    case crashed(crash: CaseCrash, measurements: CaseMeasurements?)
    /// The harness could not measure the case: it did not start, or it ended without a result.
    case notMeasured(reason: String)

    /// The kind of outcome.
    public var status: CaseStatus {
        switch self {
        case .completed: return .ok
        case .failed: return .failed
        case .killedByMemoryLimit: return .killedByMemoryLimit
        case .timedOut: return .timedOut
        case .crashed: return .crashed
        case .notMeasured: return .notMeasured
        }
    }

    /// Why the case did not complete; nil when it did.
    public var failure: String? {
        switch self {
        case .completed: return nil
        case .failed(let reason, _), .notMeasured(let reason): return reason
        case .killedByMemoryLimit(let hit, _): return hit.description
        case .timedOut(let limit, _):
            return "stopped after the \(Units.formatDuration(nanoseconds: limit)) case timeout"
        case .crashed(let crash, _): return crash.description
        }
    }

    /// The same outcome with its measurements transformed (e.g. samples thinned).
    public func mapMeasurements(_ transform: (CaseMeasurements) -> CaseMeasurements) -> CaseOutcome {
        switch self {
        case .completed(let m): return .completed(measurements: transform(m))
        case .failed(let reason, let m): return .failed(reason: reason, measurements: transform(m))
        case .killedByMemoryLimit(let hit, let m): return .killedByMemoryLimit(hit: hit, measurements: transform(m))
        case .timedOut(let limit, let m): return .timedOut(limitNanoseconds: limit, measurements: m.map(transform))
        case .crashed(let crash, let m): return .crashed(crash: crash, measurements: m.map(transform))
        case .notMeasured: return self
        }
    }

    /// Whatever was measured.
    public var measurements: CaseMeasurements? {
        switch self {
        case .completed(let measurements), .failed(_, let measurements), .killedByMemoryLimit(_, let measurements):
            return measurements
        case .timedOut(_, let measurements), .crashed(_, let measurements): return measurements
        case .notMeasured: return nil
        }
    }
}

/// The kind of a case's outcome, as `summary.csv` spells it.
public enum CaseStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case ok
    case failed
    case crashed
    case timedOut = "timed-out"
    case killedByMemoryLimit = "killed-by-memory-limit"
    case notMeasured = "not-measured"
}

/// How a case process died of a signal.
public struct CaseCrash: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The signal's number.
    public var signal: Int32
    /// Its name: `SIGABRT`.
    public var signalName: String
    /// The Swift runtime's message when there was one (`Fatal error: Index out of range at Array.swift:12`),
    /// else the last lines of the process's stderr; empty when it printed nothing.
    public var message: String

    public init(signal: Int32, signalName: String, message: String) {
        self.signal = signal
        self.signalName = signalName
        self.message = message
    }

    public var description: String {
        "killed by signal \(signal) (\(signalName))" + (message.isEmpty ? "" : ": \(message)")
    }
}

/// The sample at which a case's footprint exceeded its memory limit.
public struct MemoryLimitHit: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Time of the sample, nanoseconds since the case started.
    public var timeNanoseconds: Int64
    /// The footprint that sample read, bytes.
    public var footprintBytes: Int
    /// The limit it exceeded, bytes.
    public var limitBytes: Int
    /// Which figure the footprint is.
    public var footprint: FootprintMeasure
    /// Memory warnings posted before the limit was exceeded.
    public var warningsBefore: Int
    /// The footprint when the case process wrote its result, minus the limit, bytes: what the workload
    /// added while the harness was stopping it; nil until known.
    public var overshootAtStopBytes: Int?

    public init(
        timeNanoseconds: Int64, footprintBytes: Int, limitBytes: Int, footprint: FootprintMeasure,
        warningsBefore: Int, overshootAtStopBytes: Int? = nil
    ) {
        self.timeNanoseconds = timeNanoseconds
        self.footprintBytes = footprintBytes
        self.limitBytes = limitBytes
        self.footprint = footprint
        self.warningsBefore = warningsBefore
        self.overshootAtStopBytes = overshootAtStopBytes
    }

    /// How far past the limit the footprint was when the sampler saw it, bytes.
    public var overshootBytes: Int { footprintBytes - limitBytes }

    /// `killed by memory limit at 1.42 s, 300.40 MiB allocated (limit 300.00 MiB), after 1 memory warning`.
    public var description: String {
        var text =
            "killed by memory limit at \(Units.fixed(Double(timeNanoseconds) / 1e9, decimals: 2)) s, "
            + "\(Units.formatBytes(footprintBytes)) \(footprint.rawValue) (limit \(Units.formatBytes(limitBytes)))"
        if warningsBefore > 0 {
            text += ", after \(warningsBefore) memory warning\(warningsBefore == 1 ? "" : "s")"
        }
        return text
    }
}

/// How the sampler did during a case.
public struct SamplingFigures: Sendable, Hashable, Codable {
    /// Samples taken (before any merging).
    public var sampleCount: Int
    /// The interval asked for, nanoseconds (0 when sampling was off).
    public var requestedIntervalNanoseconds: Int64
    /// The mean interval between samples actually achieved, nanoseconds.
    public var achievedIntervalNanoseconds: Int64
    /// Bytes the sampler thread allocated while sampling (should be 0).
    public var samplerAllocatedBytes: Int

    public init(
        sampleCount: Int = 0, requestedIntervalNanoseconds: Int64 = 0, achievedIntervalNanoseconds: Int64 = 0,
        samplerAllocatedBytes: Int = 0
    ) {
        self.sampleCount = sampleCount
        self.requestedIntervalNanoseconds = requestedIntervalNanoseconds
        self.achievedIntervalNanoseconds = achievedIntervalNanoseconds
        self.samplerAllocatedBytes = samplerAllocatedBytes
    }
}

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

    public init(
        baselineAllocatedBytes: Int, peak: AllocatorStatsValues, peakRSSBytes: Int, residueBytes: Int?,
        durationNanoseconds: Int64, cpuNanoseconds: Int64? = nil, sampling: SamplingFigures = SamplingFigures(),
        phases: [PhaseResult] = [], metrics: [Metric] = [], samples: SampleSeries? = nil,
        leaks: LeakMeasurements? = nil, exact: ExactPeakValues? = nil, memoryWarnings: Int? = nil,
        profile: AllocationProfile? = nil, program: ProgramReport? = nil, floor: MeasurementFloor? = nil
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
            memoryWarnings: memoryWarnings, profile: profile, program: program, floor: floor)
    }

    /// The same measurements with a profile (the runner symbolizes the record after the case ends).
    public func replacingProfile(_ profile: AllocationProfile?) -> CaseMeasurements {
        CaseMeasurements(
            baselineAllocatedBytes: baselineAllocatedBytes, peak: peak, peakRSSBytes: peakRSSBytes,
            residueBytes: residueBytes, durationNanoseconds: durationNanoseconds, cpuNanoseconds: cpuNanoseconds,
            sampling: sampling, phases: phases, metrics: metrics, samples: samples, leaks: leaks, exact: exact,
            memoryWarnings: memoryWarnings, profile: profile, program: program, floor: floor)
    }
}

/// What an external program did.
public struct ProgramReport: Sendable, Hashable, Codable {
    /// The command line run.
    public var commandLine: String
    /// How it ended; nil when it did not end by itself (killed at the timeout).
    public var termination: TerminationStatus?
    /// The last lines of its stderr (at most 10), for the report.
    public var stderrTail: String
    /// The processes measured: the one started and every process it started in turn (their figures are
    /// added up); nil in records written before it was counted.
    public var processCount: Int?

    public init(commandLine: String, termination: TerminationStatus?, stderrTail: String, processCount: Int? = nil) {
        self.commandLine = commandLine
        self.termination = termination
        self.stderrTail = stderrTail
        self.processCount = processCount
    }

    // run.json keeps the ending as two optional fields, `exitStatus` or `signal`, as records always have.
    private enum CodingKeys: String, CodingKey {
        case commandLine, exitStatus, signal, stderrTail, processCount
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        commandLine = try container.decode(String.self, forKey: .commandLine)
        if let status = try container.decodeIfPresent(Int32.self, forKey: .exitStatus) {
            termination = .exited(status)
        } else {
            termination = try container.decodeIfPresent(Int32.self, forKey: .signal).map { .signaled($0) }
        }
        stderrTail = try container.decode(String.self, forKey: .stderrTail)
        processCount = try container.decodeIfPresent(Int.self, forKey: .processCount)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(commandLine, forKey: .commandLine)
        switch termination {
        case .exited(let status): try container.encode(status, forKey: .exitStatus)
        case .signaled(let signal): try container.encode(signal, forKey: .signal)
        case nil: break
        }
        try container.encode(stderrTail, forKey: .stderrTail)
        try container.encodeIfPresent(processCount, forKey: .processCount)
    }
}
