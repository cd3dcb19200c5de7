/// Everything a child process needs to run one case; sent to it as JSON.
public struct CaseSpec: Sendable, Hashable, Codable {
    public var scenario: String
    public var workload: String
    public var strategy: String
    /// Repetition number, from 1.
    public var repetition: Int
    public var parameters: ParameterValues
    /// The script, built-in steps included.
    public var steps: [StepInvocation]
    /// Sampling interval, nanoseconds; 0 turns the sampler off.
    public var samplingIntervalNanoseconds: Int64
    /// Rows the sampler reserves before it starts merging.
    public var sampleCapacity: Int
    /// Wait after teardown (and before the baseline) for the settle, nanoseconds.
    public var settleNanoseconds: Int64
    /// Per-case time limit the parent enforces, nanoseconds.
    public var timeoutNanoseconds: Int64
    /// Memory limit and warning level the child enforces through its sampler; nil: none.
    public var memoryBudget: MemoryBudget?
    /// The leak expectation the scenario file states for this strategy, copied into the result.
    public var expectation: LeakExpectation?
    /// `.exact`: exact peaks as well as sampled ones (the case runs with the agent preloaded);
    /// nil or `.sampled`: sampled only. Optional so specs written without it still decode.
    public var peakMode: PeakMode?
    /// The workload's gauges, in its declaration order (for reading the samples of a case that died); nil: unknown.
    public var gaugeNames: [String]?
    /// The external program this case runs instead of a workload (`workload: command` scenarios, `profile`).
    public var program: ProgramInvocation?
    /// Record allocation stacks in this case (an extra repetition whose figures never gate); nil: off.
    public var attribution: AttributionRequest?
    /// Capture the heap as a graph in this case (the same extra repetition; the agent tracks every block); nil: off.
    public var heapGraph: HeapGraphRequest?
    /// Known leaks left out of the leak verdicts (`--suppressions`, the scenario's `suppressions:`), copied into
    /// the result; nil: none.
    public var suppressions: [LeakSuppression]?
    /// The malloc the case's program runs on (`--allocator`); nil: jemalloc (and specs written without it).
    public var allocator: Allocator?

    public init(
        scenario: String, workload: String, strategy: String, repetition: Int, parameters: ParameterValues,
        steps: [StepInvocation], samplingIntervalNanoseconds: Int64, sampleCapacity: Int = 16_384,
        settleNanoseconds: Int64 = 100_000_000, timeoutNanoseconds: Int64 = 120_000_000_000,
        memoryBudget: MemoryBudget? = nil, expectation: LeakExpectation? = nil, peakMode: PeakMode? = nil,
        gaugeNames: [String]? = nil, program: ProgramInvocation? = nil, attribution: AttributionRequest? = nil,
        heapGraph: HeapGraphRequest? = nil
    ) {
        self.scenario = scenario
        self.workload = workload
        self.strategy = strategy
        self.repetition = repetition
        self.parameters = parameters
        self.steps = steps
        self.samplingIntervalNanoseconds = samplingIntervalNanoseconds
        self.sampleCapacity = sampleCapacity
        self.settleNanoseconds = settleNanoseconds
        self.timeoutNanoseconds = timeoutNanoseconds
        self.memoryBudget = memoryBudget
        self.expectation = expectation
        self.peakMode = peakMode
        self.gaugeNames = gaugeNames
        self.program = program
        self.attribution = attribution
        self.heapGraph = heapGraph
    }

    /// True for the extra case that records stacks or captures the heap: instrumented, so its figures never gate.
    public var isInstrumented: Bool { instrumentation != nil }

    /// Phase names in order: `setup`, each step's phase, `teardown`.
    public var phaseNames: [String] { ["setup"] + steps.map(\.phase) + ["teardown"] }

    /// A short label for progress lines: `live-query / signal-next #2` (`#stacks` for the case that records
    /// allocation stacks, `#heap` for one that only captures the heap).
    public var label: String { "\(scenario) / \(strategy) #\(instrumentation?.rawValue ?? String(repetition))" }

    /// What the instrumented case records; nil for a measured one.
    public var instrumentation: Instrumentation? { attribution != nil ? .stacks : heapGraph != nil ? .heap : nil }
}

/// What an instrumented case records: it is no repetition (its figures are inflated by the recording, and never
/// enter medians, rankings or gates), and is named by this wherever a measured case has its repetition number.
public enum Instrumentation: String, Sendable, Hashable, Codable, CaseIterable {
    /// Allocation stacks (`--attribute`), and the heap graph too when a program's agent captures it.
    case stacks
    /// The heap graph only (`--heap-graph`, `expect:`, heap-graph thresholds).
    case heap
}

/// An external program run as a case: any dynamically linked Linux program, with the agent preloaded.
public struct ProgramInvocation: Sendable, Hashable, Codable {
    /// The program's path, resolved (an absolute path, or relative to the working directory).
    public var executable: String
    /// Its arguments (argv[1...]), parameters already substituted.
    public var arguments: [String]
    /// Where it runs; nil: the runner's working directory.
    public var workingDirectory: String?
    /// True when its first measured run writes to the runner's own standard output and error as it runs (as
    /// `profile` does); false: every run's output is kept in its case's folder (a scenario's command cases).
    public var passesOutputThrough: Bool
    /// How a program that serves is made ready, driven and stopped; nil: it runs to its own end.
    public var server: ServerPlan?

    public init(
        executable: String, arguments: [String] = [], workingDirectory: String? = nil,
        passesOutputThrough: Bool = false,
        server: ServerPlan? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.workingDirectory = workingDirectory
        self.passesOutputThrough = passesOutputThrough
        self.server = server
    }

    private enum CodingKeys: String, CodingKey {
        case executable, arguments, workingDirectory, passesOutputThrough, server
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        executable = try container.decode(String.self, forKey: .executable)
        arguments = try container.decode([String].self, forKey: .arguments)
        workingDirectory = try container.decodeIfPresent(String.self, forKey: .workingDirectory)
        passesOutputThrough = try container.decodeIfPresent(Bool.self, forKey: .passesOutputThrough) ?? false
        server = try container.decodeIfPresent(ServerPlan.self, forKey: .server)
    }

    /// The command line as a person would type it (arguments with spaces quoted).
    public var commandLine: String {
        ([executable] + arguments).map { $0.contains(" ") || $0.isEmpty ? "'\($0)'" : $0 }.joined(separator: " ")
    }
}

/// How an attributed case samples allocation stacks.
public struct AttributionRequest: Sendable, Hashable, Codable {
    /// The mean sampling interval, bytes: one stack per this many bytes allocated on average (Poisson,
    /// so a block larger than this is almost always sampled).
    public var sampleMeanBytes: Int

    /// 64 KiB, chosen by measurement (Reports/benchmarks/attribution.md): the densest of 64, 128 and 256 KiB
    /// within the 1.5x target on the churn benchmark (1.26x the uninstrumented time, paired by round); the
    /// median error on a site of 16 MiB in 1 KiB blocks 2.8% (4.3% at 128 KiB, 6.1% at 256 KiB).
    public static let defaultSampleMeanBytes = 64 << 10

    public init(sampleMeanBytes: Int = AttributionRequest.defaultSampleMeanBytes) {
        self.sampleMeanBytes = sampleMeanBytes
    }
}

/// A step of the script as the workload receives it.
public struct StepInvocation: Sendable, Hashable, Codable {
    /// The step's name as declared by the workload (`burst`, `subscribe`).
    public var name: String
    /// The phase it is reported under (the name, or the `phase:` given in the file).
    public var phase: String
    /// The step's arguments after defaults.
    public var arguments: ParameterValues
    /// The steps a built-in `repeat` runs each iteration; nil for every other step.
    public var body: [StepInvocation]?

    public init(name: String, phase: String, arguments: ParameterValues, body: [StepInvocation]? = nil) {
        self.name = name
        self.phase = phase
        self.arguments = arguments
        self.body = body
    }
}

/// How a case measures its peak: sampled `stats.allocated` only, or also exactly at every allocation.
public enum PeakMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// The sampler alone (default): cheap, but blind to spikes shorter than its interval.
    case sampled
    /// Every allocation counted by the preloaded agent's malloc family, beside the sampler: exact
    /// high-water marks per phase and overall, at the price of a slower malloc/free.
    case exact
}
