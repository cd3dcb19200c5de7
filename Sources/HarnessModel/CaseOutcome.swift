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

    /// Why the case did not complete, typed; nil when it did. Its words are the renderers' (Reports'
    /// `CaseFailure.text`).
    public var failure: CaseFailure? {
        switch self {
        case .completed: return nil
        case .failed(let reason, _): return .workload(reason)
        case .notMeasured(let reason): return .notMeasured(reason)
        case .killedByMemoryLimit(let hit, _): return .memoryLimit(hit)
        case .timedOut(let limit, _): return .timeout(limitNanoseconds: limit)
        case .crashed(let crash, _): return .crash(crash)
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

/// Why a case did not complete: what the outcome holds, typed. A workload's or the harness's own reason is text made
/// outside the model (an error's message); the other kinds carry their figures and are worded by the renderers.
public enum CaseFailure: Sendable, Hashable {
    /// The workload threw, or a step of the case failed: the message.
    case workload(String)
    /// The harness could not measure the case: why.
    case notMeasured(String)
    /// The memory limit stopped it.
    case memoryLimit(MemoryLimitHit)
    /// The case's time limit stopped it, nanoseconds.
    case timeout(limitNanoseconds: Int64)
    /// A signal it did not ask for ended it.
    case crash(CaseCrash)

    /// The message a workload or the harness gave (made outside the model); nil for the other kinds.
    public var message: String? {
        switch self {
        case .workload(let message), .notMeasured(let message): return message
        case .memoryLimit, .timeout, .crash: return nil
        }
    }
}

/// How a case process died of a signal.
public struct CaseCrash: Sendable, Hashable, Codable {
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
}

/// The sample at which a case's footprint exceeded its memory limit.
public struct MemoryLimitHit: Sendable, Hashable, Codable {
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
    /// With `--peak exact` over several processes, each process's exact figures, the started one first; nil
    /// otherwise. A process that left no count makes the tree's exact peak missing, and says so.
    public var processPeaks: [ProcessExactPeak]?
    /// Set when the program's anonymous resident set far exceeded the allocator's resident bytes: memory it holds
    /// outside malloc (a runtime's own heap such as a JVM's or Node's, mmap), which the allocated figures do not show.
    public var residentBeyondAllocator: ResidentBeyondAllocator?
    /// The started process's resident set explained at its highest explained point and at its exit (in that order,
    /// either missing when the agent did not write it); nil in records written before it was.
    public var residentExplained: [ResidentBreakdown]?
    /// The malloc that served the started process, as its agent found it; nil when the agent wrote no samples (or in
    /// records written before it said).
    public var allocator: Allocator?

    public init(
        commandLine: String, termination: TerminationStatus?, stderrTail: String, processCount: Int? = nil,
        processPeaks: [ProcessExactPeak]? = nil, residentBeyondAllocator: ResidentBeyondAllocator? = nil,
        residentExplained: [ResidentBreakdown]? = nil
    ) {
        self.commandLine = commandLine
        self.termination = termination
        self.stderrTail = stderrTail
        self.processCount = processCount
        self.processPeaks = processPeaks
        self.residentBeyondAllocator = residentBeyondAllocator
        self.residentExplained = residentExplained
    }

    // run.json keeps the ending as two optional fields, `exitStatus` or `signal`, as records always have.
    private enum CodingKeys: String, CodingKey {
        case commandLine, exitStatus, signal, stderrTail, processCount, processPeaks, residentBeyondAllocator
        case residentExplained, allocator
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
        processPeaks = try container.decodeIfPresent([ProcessExactPeak].self, forKey: .processPeaks)
        residentBeyondAllocator = try container.decodeIfPresent(
            ResidentBeyondAllocator.self, forKey: .residentBeyondAllocator)
        residentExplained = try container.decodeIfPresent([ResidentBreakdown].self, forKey: .residentExplained)
        allocator = try container.decodeIfPresent(Allocator.self, forKey: .allocator)
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
        try container.encodeIfPresent(processPeaks, forKey: .processPeaks)
        try container.encodeIfPresent(residentBeyondAllocator, forKey: .residentBeyondAllocator)
        try container.encodeIfPresent(residentExplained, forKey: .residentExplained)
        try container.encodeIfPresent(allocator, forKey: .allocator)
    }
}

/// One process of a program's tree and the exact figures its agent counted (`--peak exact`).
public struct ProcessExactPeak: Sendable, Hashable, Codable {
    /// Its process id.
    public var processID: Int
    /// The executable it ran, as its agent's record names it; nil when it left no record.
    public var executable: String?
    /// Its figures, counted from the agent's load (from the fork, for a process forked without exec); nil when it
    /// left none: it did not end through `exit` (killed, `_exit`, an exec into a program the agent cannot load into).
    public var exact: ExactPeakValues?

    public init(processID: Int, executable: String?, exact: ExactPeakValues?) {
        self.processID = processID
        self.executable = executable
        self.exact = exact
    }
}

/// A program whose anonymous resident set far exceeded the allocator's resident bytes (see `ProgramReport`).
public struct ResidentBeyondAllocator: Sendable, Hashable, Codable {
    /// The program's anonymous resident peak (RSS less file-backed and shared pages, the kernel's RssAnon), bytes;
    /// nil in records that compared the whole resident set.
    public var peakAnonymousBytes: Int?
    /// The allocator's resident peak (`stats.resident`, every process of the tree), bytes; nil in older records.
    public var peakAllocatorResidentBytes: Int?
    /// The program's whole resident-set peak, bytes: what older records compared (mapped code included).
    public var peakRSSBytes: Int?
    /// The allocator's peak (`stats.allocated`, absolute, every process of the tree), bytes.
    public var peakAllocatedBytes: Int

    public init(peakAnonymousBytes: Int, peakAllocatorResidentBytes: Int, peakAllocatedBytes: Int) {
        self.peakAnonymousBytes = peakAnonymousBytes
        self.peakAllocatorResidentBytes = peakAllocatorResidentBytes
        self.peakAllocatedBytes = peakAllocatedBytes
    }
}
