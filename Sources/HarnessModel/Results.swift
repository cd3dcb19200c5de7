/// How a case ended.
public enum CaseStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// The case ran every step and reported its figures.
    case ok
    /// The child process crashed (killed by a signal it did not ask for).
    case crashed
    /// The child process exited with a failure or reported an error.
    case failed
    /// The parent stopped the child at the per-case timeout.
    case timedOut = "timed-out"
    /// The child was stopped because its footprint crossed the memory limit.
    case killedByMemoryLimit = "killed-by-memory-limit"
}

/// A scenario-specific figure of a case (callbacks delivered, staleness p99, images loaded).
public struct Metric: Sendable, Hashable, Codable {
    /// The unit a metric value is expressed in.
    public enum Unit: String, Sendable, Hashable, Codable {
        case count, bytes, milliseconds, ratio, perSecond = "per-second"
    }
    /// Name in lowerCamelCase, unique within a case.
    public var name: String
    /// The value, in `unit`.
    public var value: Double
    /// The unit of `value`.
    public var unit: Unit

    public init(name: String, value: Double, unit: Unit) {
        self.name = name
        self.value = value
        self.unit = unit
    }
}

/// The figures of one phase (one step of the script) of a case.
public struct PhaseResult: Sendable, Hashable, Codable {
    /// The phase's name (the step's name, or `setup` / `teardown`).
    public var name: String
    /// Start of the phase, nanoseconds since the case started.
    public var startNanoseconds: Int64
    /// End of the phase, nanoseconds since the case started.
    public var endNanoseconds: Int64
    /// Highest `stats.allocated` sampled during the phase, absolute bytes.
    public var peakAllocatedBytes: Int
    /// Highest `stats.resident` sampled during the phase, absolute bytes.
    public var peakResidentBytes: Int
    /// Exact high-water mark of the live bytes during the phase (`--peak exact`), absolute bytes of
    /// the exact count (subtract `ExactPeakValues.baselineLiveBytes` for the net); nil when sampled only.
    public var exactPeakLiveBytes: Int?

    public init(name: String, startNanoseconds: Int64, endNanoseconds: Int64, peakAllocatedBytes: Int, peakResidentBytes: Int,
                exactPeakLiveBytes: Int? = nil) {
        self.name = name
        self.startNanoseconds = startNanoseconds
        self.endNanoseconds = endNanoseconds
        self.peakAllocatedBytes = peakAllocatedBytes
        self.peakResidentBytes = peakResidentBytes
        self.exactPeakLiveBytes = exactPeakLiveBytes
    }
}

/// Peaks counted at every allocation (`--peak exact`, the `memharness-exact` binary), beside the sampled ones.
///
/// The count is of live blocks in size-class bytes, as `malloc_usable_size` reports them: the
/// currency of `stats.allocated`, without jemalloc's metadata and the free blocks its thread caches hold.
public struct ExactPeakValues: Sendable, Hashable, Codable {
    /// Live bytes when the case's baseline was taken, bytes.
    public var baselineLiveBytes: Int
    /// Highest live bytes from the baseline to the end of teardown, absolute bytes.
    public var peakLiveBytes: Int
    /// Allocating calls (malloc, calloc, realloc, operator new, ...) from the baseline to the end of teardown.
    public var allocationCalls: Int

    public init(baselineLiveBytes: Int, peakLiveBytes: Int, allocationCalls: Int) {
        self.baselineLiveBytes = baselineLiveBytes
        self.peakLiveBytes = peakLiveBytes
        self.allocationCalls = allocationCalls
    }

    /// The exact peak above the baseline, bytes: what the scenario added at its worst, every spike included.
    public var peakNetBytes: Int { peakLiveBytes - baselineLiveBytes }
}

/// The sampled time series of a case, column by column.
///
/// When a run outlives the sampler's reserved storage, neighbouring samples are merged keeping
/// the maximum of every figure, so peaks survive; `mergedSamplesPerRow` says how many were merged.
public struct SampleSeries: Sendable, Hashable, Codable {
    /// Names of the phases, indexed by `phaseIndex`.
    public var phaseNames: [String]
    /// Names of the scenario's gauges, indexed like `gauges`.
    public var gaugeNames: [String]
    /// Time of each row, nanoseconds since the case started.
    public var timeNanoseconds: [Int64] = []
    public var allocatedBytes: [Int] = []
    public var activeBytes: [Int] = []
    public var residentBytes: [Int] = []
    public var mappedBytes: [Int] = []
    public var retainedBytes: [Int] = []
    public var metadataBytes: [Int] = []
    /// The kernel's RSS at each row, bytes.
    public var rssBytes: [Int] = []
    /// Index into `phaseNames` of the phase running at each row.
    public var phaseIndex: [Int] = []
    /// `gauges[g][row]`: the value of gauge `g` at each row.
    public var gauges: [[Int64]] = []
    /// How many raw samples each row stands for (1 when nothing was merged).
    public var mergedSamplesPerRow: Int = 1

    public init(phaseNames: [String], gaugeNames: [String]) {
        self.phaseNames = phaseNames
        self.gaugeNames = gaugeNames
        gauges = gaugeNames.map { _ in [] }
    }

    /// Number of rows.
    public var count: Int { timeNanoseconds.count }
}

/// Everything measured for one case: one scenario x one strategy x one repetition.
public struct CaseResult: Sendable, Hashable, Codable {
    public var scenario: String
    public var workload: String
    public var strategy: String
    /// Repetition number, starting at 1.
    public var repetition: Int
    public var status: CaseStatus
    /// Why a case did not end `ok`, in plain words (signal, exit code, error message).
    public var failure: String?
    /// `stats.allocated` after the pre-setup settle, bytes: what the harness itself holds.
    public var baselineAllocatedBytes: Int = 0
    /// Peak of each jemalloc figure over the case's samples, absolute bytes.
    public var peak = AllocatorStatsValues()
    /// The kernel's RSS high-water mark (`VmHWM`) over the case, bytes.
    public var peakRSSBytes: Int = 0
    /// `stats.allocated` after teardown and settle minus the baseline, bytes (what the case left behind;
    /// the sampler's own series are taken off). `leaks` says how far thread caches may move it.
    public var residueBytes: Int = 0
    /// Wall time from the start of setup to the end of teardown, nanoseconds.
    public var durationNanoseconds: Int64 = 0
    /// Samples taken (before any merging).
    public var sampleCount: Int = 0
    /// The sampling interval asked for, nanoseconds (0 when sampling was off).
    public var requestedIntervalNanoseconds: Int64 = 0
    /// The mean interval between samples actually achieved, nanoseconds.
    public var achievedIntervalNanoseconds: Int64 = 0
    /// Bytes the sampler thread allocated while sampling (should be 0).
    public var samplerAllocatedBytes: Int = 0
    public var phases: [PhaseResult] = []
    public var metrics: [Metric] = []
    public var samples: SampleSeries?
    /// The leak expectation the scenario file states for this strategy, if any.
    public var expectation: LeakExpectation?
    /// Surviving tracked objects, growth per `repeat` iteration and residue uncertainty (nil when not measured).
    public var leaks: LeakMeasurements?
    /// Exact peaks (`--peak exact`); nil when the case was sampled only.
    public var exact: ExactPeakValues?
    /// CPU time of the child process (every thread) from the start of setup to the end of teardown,
    /// nanoseconds; nil when not measured. Kept in run.json, not in summary.csv.
    public var cpuNanoseconds: Int64?

    public init(scenario: String, workload: String, strategy: String, repetition: Int, status: CaseStatus, failure: String? = nil) {
        self.scenario = scenario
        self.workload = workload
        self.strategy = strategy
        self.repetition = repetition
        self.status = status
        self.failure = failure
    }

    /// Peak `stats.allocated` above the baseline, bytes: what the scenario itself added at its worst.
    public var peakAllocatedNetBytes: Int { peak.allocatedBytes - baselineAllocatedBytes }

    /// The exact peak above its baseline, bytes; nil when the case was sampled only.
    public var exactPeakNetBytes: Int? { exact?.peakNetBytes }

    /// Exact net peak minus sampled net peak, bytes: what the sampler missed between its samples
    /// (spikes shorter than the interval). A few KiB either way is thread-cache noise: the sampled
    /// figure counts free blocks held in thread caches, the exact one does not. Nil when sampled only.
    public var spikeExcessBytes: Int? { exactPeakNetBytes.map { $0 - peakAllocatedNetBytes } }

    /// A phase's exact peak above the case's exact baseline, bytes; nil when the case was sampled only.
    public func exactPeakNetBytes(of phase: PhaseResult) -> Int? {
        guard let exact, let live = phase.exactPeakLiveBytes else { return nil }
        return live - exact.baselineLiveBytes
    }

    /// A metric by name.
    public func metric(_ name: String) -> Metric? { metrics.first { $0.name == name } }
}

/// The jemalloc figures as plain values (mirrors the probe's `AllocatorStats`, which reports do not import).
public struct AllocatorStatsValues: Sendable, Hashable, Codable {
    public var allocatedBytes: Int = 0
    public var activeBytes: Int = 0
    public var residentBytes: Int = 0
    public var mappedBytes: Int = 0
    public var retainedBytes: Int = 0
    public var metadataBytes: Int = 0

    public init(allocatedBytes: Int = 0, activeBytes: Int = 0, residentBytes: Int = 0,
                mappedBytes: Int = 0, retainedBytes: Int = 0, metadataBytes: Int = 0) {
        self.allocatedBytes = allocatedBytes
        self.activeBytes = activeBytes
        self.residentBytes = residentBytes
        self.mappedBytes = mappedBytes
        self.retainedBytes = retainedBytes
        self.metadataBytes = metadataBytes
    }
}

/// A parameter of a scenario as it was run, for the report.
public struct NamedValue: Sendable, Hashable, Codable {
    public var name: String
    public var value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// One scenario of a run with all its cases.
public struct ScenarioRun: Sendable, Hashable, Codable {
    /// The scenario's name (from the file).
    public var name: String
    /// The scenario file, as given on the command line.
    public var file: String
    public var workload: String
    /// The scenario's description from its file.
    public var summary: String
    /// Parameters after defaults and overrides, in declaration order.
    public var parameters: [NamedValue]
    /// Strategies in the order the file lists them.
    public var strategies: [String]
    /// The phases (step names) in order.
    public var steps: [String]
    public var repetitions: Int
    /// Every case, in run order.
    public var cases: [CaseResult]
    /// The scenario file's thresholds, evaluated on the medians of `cases`.
    public var thresholds: [Threshold] = []

    public init(name: String, file: String, workload: String, summary: String, parameters: [NamedValue],
                strategies: [String], steps: [String], repetitions: Int, cases: [CaseResult]) {
        self.name = name
        self.file = file
        self.workload = workload
        self.summary = summary
        self.parameters = parameters
        self.strategies = strategies
        self.steps = steps
        self.repetitions = repetitions
        self.cases = cases
    }
}

/// Facts about the machine and allocator a run was measured on.
public struct EnvironmentInfo: Sendable, Hashable, Codable {
    public var toolVersion: String
    public var jemallocVersion: String
    /// jemalloc `opt.*` settings that shape the figures, by name.
    public var jemallocSettings: [String: String]
    public var swiftVersion: String
    public var operatingSystem: String
    public var kernel: String
    public var cpuModel: String
    public var cpuCount: Int
    public var memoryBytes: Int
    /// The sampling interval asked for, nanoseconds.
    public var requestedIntervalNanoseconds: Int64

    public init(toolVersion: String, jemallocVersion: String, jemallocSettings: [String: String], swiftVersion: String,
                operatingSystem: String, kernel: String, cpuModel: String, cpuCount: Int, memoryBytes: Int,
                requestedIntervalNanoseconds: Int64) {
        self.toolVersion = toolVersion
        self.jemallocVersion = jemallocVersion
        self.jemallocSettings = jemallocSettings
        self.swiftVersion = swiftVersion
        self.operatingSystem = operatingSystem
        self.kernel = kernel
        self.cpuModel = cpuModel
        self.cpuCount = cpuCount
        self.memoryBytes = memoryBytes
        self.requestedIntervalNanoseconds = requestedIntervalNanoseconds
    }
}

/// The outcome of a whole run: what the report writers take.
public struct RunReport: Sendable, Hashable, Codable {
    /// When the run finished, ISO 8601 UTC (injected, so output is deterministic in tests).
    public var generatedAt: String
    public var environment: EnvironmentInfo
    public var scenarios: [ScenarioRun]
    /// Peak versus a swept value (`run --set key=v1,v2,...`), one per scenario; nil without a sweep.
    public var sweeps: [SweepSummary]?

    public init(generatedAt: String, environment: EnvironmentInfo, scenarios: [ScenarioRun], sweeps: [SweepSummary]? = nil) {
        self.generatedAt = generatedAt
        self.environment = environment
        self.scenarios = scenarios
        self.sweeps = sweeps
    }
}

extension RunReport {
    /// Combines the reports of shards of one run: cases of the same scenario are put together (in
    /// repetition, then strategy order); the first report supplies the environment and date.
    public static func merged(_ reports: [RunReport]) -> RunReport? {
        guard let first = reports.first else { return nil }
        var scenarios: [ScenarioRun] = []
        for report in reports {
            for run in report.scenarios {
                if let index = scenarios.firstIndex(where: { $0.name == run.name }) {
                    scenarios[index].cases += run.cases
                    for strategy in run.strategies where !scenarios[index].strategies.contains(strategy) {
                        scenarios[index].strategies.append(strategy)
                    }
                    if scenarios[index].thresholds.isEmpty { scenarios[index].thresholds = run.thresholds }
                } else {
                    scenarios.append(run)
                }
            }
        }
        for index in scenarios.indices {
            let order = scenarios[index].strategies
            scenarios[index].cases.sort {
                ($0.repetition, order.firstIndex(of: $0.strategy) ?? 0) < ($1.repetition, order.firstIndex(of: $1.strategy) ?? 0)
            }
            scenarios[index].repetitions = scenarios[index].cases.map(\.repetition).max() ?? 0
        }
        let latest = reports.map(\.generatedAt).max() ?? first.generatedAt
        return RunReport(generatedAt: latest, environment: first.environment, scenarios: scenarios, sweeps: first.sweeps)
    }
}
