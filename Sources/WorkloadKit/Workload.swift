import HarnessModel

/// A modelled system that scenarios run under several strategies.
///
/// A workload declares what a scenario file may say about it (strategies, parameters, steps,
/// gauges) in its `descriptor`, and makes one `WorkloadCase` per case. The harness validates
/// scenario files against the descriptor before any work, so `makeCase` sees only valid values.
public protocol Workload: Sendable {
    /// What scenario files may name: strategies, parameters, steps and gauges.
    var descriptor: WorkloadDescriptor { get }
    /// Makes the object that runs one case of `strategy` with fully resolved `parameters`.
    func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
}

/// One case of a workload: set up, run the script's steps, tear down.
///
/// Everything runs on the case's main thread; workloads start threads or queues of their own as
/// the modelled system needs. `tearDown` must release everything the strategy is supposed to
/// release: what survives it is the residue (and, with tracking, leaks).
public protocol WorkloadCase: AnyObject {
    /// Prepares the modelled system (phase `setup`). Default: nothing.
    func setUp(context: CaseContext) throws
    /// Runs one workload-defined step (built-in steps such as `idle` never reach here).
    func run(_ step: StepInvocation, context: CaseContext) throws
    /// Releases the modelled system (phase `teardown`). Default: nothing.
    func tearDown(context: CaseContext) throws
    /// The case's own figures (callbacks delivered, staleness), read after teardown. Default: none.
    func metrics() -> [Metric]
}

extension WorkloadCase {
    public func setUp(context: CaseContext) throws {}
    public func tearDown(context: CaseContext) throws {}
    public func metrics() -> [Metric] { [] }
}

/// Everything a workload declares about itself.
public struct WorkloadDescriptor: Sendable {
    /// The name scenario files use in `workload:`.
    public var name: String
    /// One line on what it models.
    public var summary: String
    public var strategies: [StrategyDescriptor]
    public var parameters: [ParameterSpec]
    /// Steps the workload runs itself (built-ins such as `idle` and `settle` are added by the harness).
    public var steps: [StepDescriptor]
    /// Scenario-specific figures sampled with memory, in order.
    public var gauges: [GaugeDescriptor]
    /// The figures a case reports once it ends (`WorkloadCase.metrics()`), so thresholds and `rank:`
    /// can name them before anything runs.
    public var metrics: [MetricDescriptor]
    /// The steps used when a scenario file gives none.
    public var defaultSteps: [String]

    public init(
        name: String, summary: String, strategies: [StrategyDescriptor], parameters: [ParameterSpec],
        steps: [StepDescriptor], gauges: [GaugeDescriptor] = [], metrics: [MetricDescriptor] = [],
        defaultSteps: [String]
    ) {
        self.name = name
        self.summary = summary
        self.strategies = strategies
        self.parameters = parameters
        self.steps = steps
        self.gauges = gauges
        self.metrics = metrics
        self.defaultSteps = defaultSteps
    }
}

/// A strategy a workload can run.
public struct StrategyDescriptor: Sendable, Hashable {
    public var name: String
    /// One line on what the app does under this strategy.
    public var summary: String
    public init(_ name: String, _ summary: String) {
        self.name = name
        self.summary = summary
    }
}

/// A step a workload can run, with its arguments.
public struct StepDescriptor: Sendable {
    public var name: String
    public var summary: String
    /// The arguments; a scalar in the file (`burst: 3s`) sets the first one.
    public var arguments: [ParameterSpec]
    public init(_ name: String, _ summary: String, arguments: [ParameterSpec] = []) {
        self.name = name
        self.summary = summary
        self.arguments = arguments
    }
}

/// A gauge: a scenario-specific number sampled with memory (queue depth, items retained).
public struct GaugeDescriptor: Sendable, Hashable {
    public var name: String
    public var summary: String
    public init(_ name: String, _ summary: String) {
        self.name = name
        self.summary = summary
    }
}

/// A figure a workload reports per case: its name, unit and meaning.
public struct MetricDescriptor: Sendable, Hashable {
    public var name: String
    public var unit: Metric.Unit
    public var summary: String
    public init(_ name: String, _ unit: Metric.Unit, _ summary: String) {
        self.name = name
        self.unit = unit
        self.summary = summary
    }
}
