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
    /// `.exact`: exact peaks as well as sampled ones (the case needs the `memharness-exact` binary);
    /// nil or `.sampled`: sampled only. Optional so specs written without it still decode.
    public var peakMode: PeakMode?
    /// The workload's gauges, in its declaration order (for reading the samples of a case that died); nil: unknown.
    public var gaugeNames: [String]?

    public init(
        scenario: String, workload: String, strategy: String, repetition: Int, parameters: ParameterValues,
        steps: [StepInvocation], samplingIntervalNanoseconds: Int64, sampleCapacity: Int = 16_384,
        settleNanoseconds: Int64 = 100_000_000, timeoutNanoseconds: Int64 = 120_000_000_000,
        memoryBudget: MemoryBudget? = nil, expectation: LeakExpectation? = nil, peakMode: PeakMode? = nil,
        gaugeNames: [String]? = nil
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
    }

    /// Phase names in order: `setup`, each step's phase, `teardown`.
    public var phaseNames: [String] { ["setup"] + steps.map(\.phase) + ["teardown"] }

    /// A short label for progress lines: `live-query / signal-next #2`.
    public var label: String { "\(scenario) / \(strategy) #\(repetition)" }
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
    /// Every allocation counted by `memharness-exact`'s malloc family, beside the sampler: exact
    /// high-water marks per phase and overall, at the price of a slower malloc/free.
    case exact
}
