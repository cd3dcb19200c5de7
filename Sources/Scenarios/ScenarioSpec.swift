import HarnessModel
import WorkloadKit

/// A scenario file after parsing and validation: everything needed to plan its cases.
public struct ScenarioSpec: Sendable {
    /// The scenario's name (`scenario:`).
    public var name: String
    /// The file it was read from, as given.
    public var file: String
    /// `description:`, one paragraph for the report.
    public var summary: String
    /// The workload's name (`workload:`).
    public var workload: String
    /// Parameters after defaults and the file's values (and `--set` overrides).
    public var parameters: ParameterValues
    /// Parameter names in the workload's declaration order.
    public var parameterOrder: [String]
    /// Strategies in file order.
    public var strategies: [StrategyPlan]
    /// Steps in order, with arguments after defaults.
    public var steps: [StepInvocation]
    /// Repetitions of each strategy: a fixed count, or `auto` (until the median's 95% interval is narrow enough).
    public var repetitions: RepetitionPolicy
    /// Sampling interval for this scenario; nil means the run's.
    public var interval: Duration?
    /// Per-case time limit.
    public var timeout: Duration
    /// Wait after teardown before the residue is read.
    public var settle: Duration
    /// Limits checked on the medians after the run (`thresholds:`).
    public var thresholds: [Threshold] = []
    /// `memoryLimit:`: the footprint at which cases are stopped, bytes; nil: none.
    public var memoryLimitBytes: Int? = nil
    /// `memoryWarning:`: where cases get a memory warning; nil: no warnings.
    public var memoryWarning: MemoryLevel? = nil
    /// `peak: exact` or `peak: sampled`; nil when the file does not say (the run's `--peak`, else sampled).
    public var peakMode: PeakMode? = nil
    /// The workload's gauges, in its declaration order.
    public var gaugeNames: [String] = []
    /// `rank:`: the figure that ranks the strategies (peak allocated unless the file says otherwise).
    public var ranking: Figure = .peakAllocated
    /// `rate: burst`: the phase whose length the peak grows with; the report gives each strategy's
    /// growth per second of it, a figure that does not depend on how long it runs. nil when not asked.
    public var ratePhase: String? = nil
    /// `parallel: true`: the scenario's cases may run beside other cases (`--jobs`): their figures are their
    /// own process's and do not depend on timing. False (the default): each runs with the machine to itself.
    public var parallel = false
    /// `attribution: true` (or a mean sampling interval such as `32KiB`): record allocation stacks in
    /// one more case per strategy; nil when the file does not ask (the run's `--attribute` decides).
    public var attribution: AttributionRequest? = nil
    /// `suppressions: FILE` (relative to the scenario file): known leaks left out of its leak verdicts; empty when
    /// the file names none.
    public var suppressions: [LeakSuppression] = []
    /// `manual: true`: the file runs only when named on the command line; a plain `run` (every file of the
    /// scenarios folder) leaves it out. For a demonstration of a failure, or a sweep too slow for every run.
    public var manual = false
    /// The descriptor of a `workload: command` scenario, made from the file itself (its parameters and
    /// strategies); nil for a workload of the catalog.
    public var inlineDescriptor: WorkloadDescriptor? = nil
    /// Where each top-level key of the file is, by key: for problems found after parsing (a name two files
    /// use, a warning with no limit to take its share from).
    public var keyLocations: [String: SourceLocation] = [:]

    /// Where the file sets `key`: the key's line and column; the file's start when it does not set it.
    public func location(ofKey key: String) -> SourceLocation {
        keyLocations[key] ?? SourceLocation(file: file, line: 1, column: 1)
    }
}

/// A strategy as a scenario file names it, with its own parameter overrides.
public struct StrategyPlan: Sendable, Hashable {
    public var name: String
    /// Parameters for this strategy (the scenario's, then the strategy's own overrides).
    public var parameters: ParameterValues
    /// The leak expectation (`leak-free` or `leaks`), when the file states one.
    public var expect: String?
    /// Where the strategy is named in the file.
    public var location: SourceLocation
    /// The program a `workload: command` strategy runs, its arguments still holding `{parameter}`
    /// placeholders (filled when the run is planned); nil for workload strategies.
    public var program: ProgramInvocation? = nil
    /// The malloc a command strategy's program runs on (`allocator:`); nil: the run's (`--allocator`), else jemalloc.
    public var allocator: Allocator? = nil
}

/// A place in a scenario file.
public struct SourceLocation: Sendable, Hashable, Codable, CustomStringConvertible {
    public var file: String
    /// Line, from 1.
    public var line: Int
    /// Column, from 1.
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }
}

/// A problem found in a scenario file, with where it is and how to fix it.
public struct ScenarioDiagnostic: Sendable, Hashable, CustomStringConvertible {
    public var location: SourceLocation
    public var message: String

    public init(_ location: SourceLocation, _ message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { "\(location): \(message)" }
}
