/// A scenario-specific figure of a case (callbacks delivered, staleness p99, images loaded).
public struct Metric: Sendable, Hashable, Codable {
    /// The unit a metric value is expressed in.
    public enum Unit: String, Sendable, Hashable, Codable {
        case count, bytes, milliseconds, ratio
        case perSecond = "per-second"
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
    /// Highest allocated figure sampled during the phase (see `CaseMeasurements.peak`), absolute bytes.
    public var peakAllocatedBytes: Int
    /// Highest `stats.resident` sampled during the phase, absolute bytes.
    public var peakResidentBytes: Int
    /// Exact high-water mark of the live bytes during the phase (`--peak exact`), absolute bytes of
    /// the exact count (subtract `ExactPeakValues.baselineLiveBytes` for the net); nil when sampled only.
    public var exactPeakLiveBytes: Int?
    /// How far the two back-to-back readings that set `peakAllocatedBytes` disagreed, bytes (see
    /// `MeasurementFloor.peakReadingSpreadBytes`); nil in records written before readings were confirmed.
    public var peakReadingSpreadBytes: Int?

    public init(
        name: String, startNanoseconds: Int64, endNanoseconds: Int64, peakAllocatedBytes: Int, peakResidentBytes: Int,
        exactPeakLiveBytes: Int? = nil, peakReadingSpreadBytes: Int? = nil
    ) {
        self.name = name
        self.startNanoseconds = startNanoseconds
        self.endNanoseconds = endNanoseconds
        self.peakAllocatedBytes = peakAllocatedBytes
        self.peakResidentBytes = peakResidentBytes
        self.exactPeakLiveBytes = exactPeakLiveBytes
        self.peakReadingSpreadBytes = peakReadingSpreadBytes
    }
}

/// What the harness cannot take out of a case's peaks: the uncertainty the report states beside them.
///
/// The harness keeps its own allocations out of the case (its storage is reserved before the baseline,
/// the sampler's thread exists before it), and the allocated figure leaves out the freed blocks thread
/// caches hold. What remains is measured here, per case: what the harness still allocated after the
/// baseline, and, for sampled figures, how far two back-to-back readings of the live heap disagreed where
/// the peak was read (a thread cache filling or flushing while jemalloc summed the caches and the arenas,
/// and whatever the workload's threads allocated or freed in the microseconds between the readings).
/// Size-class rounding is not an uncertainty: it is what the heap really holds.
public struct MeasurementFloor: Sendable, Hashable, Codable {
    /// Bytes the harness allocated after the baseline on the case's thread outside the workload's calls
    /// (phase bookkeeping, built-in steps) and on the sampler's thread, bytes: at most what it adds to
    /// any figure (it counts allocations, not what stays live).
    public var harnessAllocatedBytes: Int
    /// How far the two back-to-back readings that set the sampled peak disagreed, bytes.
    public var peakReadingSpreadBytes: Int

    public init(harnessAllocatedBytes: Int, peakReadingSpreadBytes: Int) {
        self.harnessAllocatedBytes = harnessAllocatedBytes
        self.peakReadingSpreadBytes = peakReadingSpreadBytes
    }

    /// ± of the sampled peak (net), bytes: the harness's allocations plus the reading spread.
    public var peakUncertaintyBytes: Int { harnessAllocatedBytes + peakReadingSpreadBytes }

    /// ± of an exact peak (net), bytes: the harness's allocations (the exact count has no reading spread).
    public var exactPeakUncertaintyBytes: Int { harnessAllocatedBytes }

    /// ± of a phase's sampled peak, bytes; nil when the phase's reading spread is unknown.
    public func uncertaintyBytes(of phase: PhaseResult) -> Int? {
        phase.peakReadingSpreadBytes.map { harnessAllocatedBytes + $0 }
    }
}

/// Peaks counted at every allocation (`--peak exact`, by the agent preloaded into the case), beside the
/// sampled ones.
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

/// The jemalloc figures as plain values (mirrors the probe's `AllocatorStats`, which reports do not import).
public struct AllocatorStatsValues: Sendable, Hashable, Codable {
    public var allocatedBytes: Int = 0
    public var activeBytes: Int = 0
    public var residentBytes: Int = 0
    public var mappedBytes: Int = 0
    public var retainedBytes: Int = 0
    public var metadataBytes: Int = 0

    public init(
        allocatedBytes: Int = 0, activeBytes: Int = 0, residentBytes: Int = 0,
        mappedBytes: Int = 0, retainedBytes: Int = 0, metadataBytes: Int = 0
    ) {
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
    /// The figure that ranks the strategies (`rank:`; peak allocated unless the file says otherwise).
    public var ranking: Figure = .peakAllocated
    /// The phase whose growth per second the report gives beside the peak (`rate:`); nil when not asked.
    public var ratePhase: String? = nil
    /// One case per strategy that recorded allocation stacks (`--attribute`), kept apart from `cases`:
    /// its figures are inflated by the recording and never enter medians, rankings or gates.
    public var attributedCases: [CaseResult] = []
    /// `repetitions: auto`: the stopping rule the cases ran under (each strategy's count is in `cases`);
    /// nil for a fixed count.
    public var adaptiveRepetitions: AdaptiveRepetitions?

    public init(
        name: String, file: String, workload: String, summary: String, parameters: [NamedValue],
        strategies: [String], steps: [String], repetitions: Int, cases: [CaseResult]
    ) {
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

    public init(
        toolVersion: String, jemallocVersion: String, jemallocSettings: [String: String], swiftVersion: String,
        operatingSystem: String, kernel: String, cpuModel: String, cpuCount: Int, memoryBytes: Int,
        requestedIntervalNanoseconds: Int64
    ) {
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
    /// Wall time from the first case's start to the last case's end, nanoseconds; nil when not measured
    /// (merged shards, older records).
    public var elapsedNanoseconds: Int64? = nil

    public init(
        generatedAt: String, environment: EnvironmentInfo, scenarios: [ScenarioRun], sweeps: [SweepSummary]? = nil
    ) {
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
                    scenarios[index].attributedCases += run.attributedCases
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
                ($0.repetition, order.firstIndex(of: $0.strategy) ?? 0) < (
                    $1.repetition, order.firstIndex(of: $1.strategy) ?? 0
                )
            }
            scenarios[index].repetitions = scenarios[index].cases.map(\.repetition).max() ?? 0
        }
        let latest = reports.map(\.generatedAt).max() ?? first.generatedAt
        return RunReport(
            generatedAt: latest, environment: first.environment, scenarios: scenarios, sweeps: first.sweeps)
    }
}

extension SampleSeries {
    private enum CodingKeys: String, CodingKey {
        case phaseNames, gaugeNames, mergedSamplesPerRow, timeNanoseconds, allocatedBytes, activeBytes, residentBytes
        case mappedBytes, retainedBytes, metadataBytes, rssBytes, phaseIndex, gauges
    }

    /// Each column is one string of space-separated integers: a run's record stays a readable JSON
    /// file of a few MB instead of millions of lines.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(phaseNames, forKey: .phaseNames)
        try container.encode(gaugeNames, forKey: .gaugeNames)
        try container.encode(mergedSamplesPerRow, forKey: .mergedSamplesPerRow)
        func column<T: BinaryInteger>(_ values: [T]) -> String { values.map { String($0) }.joined(separator: " ") }
        try container.encode(column(timeNanoseconds), forKey: .timeNanoseconds)
        try container.encode(column(allocatedBytes), forKey: .allocatedBytes)
        try container.encode(column(activeBytes), forKey: .activeBytes)
        try container.encode(column(residentBytes), forKey: .residentBytes)
        try container.encode(column(mappedBytes), forKey: .mappedBytes)
        try container.encode(column(retainedBytes), forKey: .retainedBytes)
        try container.encode(column(metadataBytes), forKey: .metadataBytes)
        try container.encode(column(rssBytes), forKey: .rssBytes)
        try container.encode(column(phaseIndex), forKey: .phaseIndex)
        try container.encode(gauges.map { column($0) }, forKey: .gauges)
    }

    /// Refuses columns of different lengths, numbers that do not parse or overflow, phase indices
    /// outside the phase names and a gauge count that does not match the names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        phaseNames = try container.decode([String].self, forKey: .phaseNames)
        gaugeNames = try container.decode([String].self, forKey: .gaugeNames)
        mergedSamplesPerRow = try container.decode(Int.self, forKey: .mergedSamplesPerRow)
        func column<T: FixedWidthInteger>(_ key: CodingKeys, as _: T.Type = T.self) throws -> [T] {
            try Self.parseColumn(try container.decode(String.self, forKey: key), key: key, in: container)
        }
        timeNanoseconds = try column(.timeNanoseconds)
        allocatedBytes = try column(.allocatedBytes)
        activeBytes = try column(.activeBytes)
        residentBytes = try column(.residentBytes)
        mappedBytes = try column(.mappedBytes)
        retainedBytes = try column(.retainedBytes)
        metadataBytes = try column(.metadataBytes)
        rssBytes = try column(.rssBytes)
        phaseIndex = try column(.phaseIndex)
        gauges = try container.decode([String].self, forKey: .gauges).map {
            try Self.parseColumn($0, key: .gauges, in: container)
        }
        let lengths =
            [
                allocatedBytes.count, activeBytes.count, residentBytes.count, mappedBytes.count, retainedBytes.count,
                metadataBytes.count, rssBytes.count, phaseIndex.count,
            ] + gauges.map(\.count)
        guard lengths.allSatisfy({ $0 == timeNanoseconds.count }), gauges.count == gaugeNames.count,
            mergedSamplesPerRow >= 1, phaseIndex.allSatisfy({ $0 >= -1 && $0 <= phaseNames.count })
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .timeNanoseconds, in: container,
                debugDescription: "the sample columns disagree (lengths, gauge names or phase indices)")
        }
    }

    private static func parseColumn<T: FixedWidthInteger>(
        _ text: String, key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>
    ) throws -> [T] {
        guard !text.isEmpty else { return [] }
        // Within ±2^53 as every figure of a record: differences of times and sizes cannot overflow.
        let limit: T = T.bitWidth > 54 ? T(1) << 53 : T.max
        return try text.split(separator: " ", omittingEmptySubsequences: false).map { field in
            guard let value = T(field), value.magnitude <= limit.magnitude else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: "'\(field.prefix(24))' is not a whole number within ±2^53")
            }
            return value
        }
    }
}
