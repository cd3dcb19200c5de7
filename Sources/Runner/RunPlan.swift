import HarnessModel
import Measurement
import Scenarios
import WorkloadKit

/// Options of a run that apply to every scenario.
public struct RunOptions: Sendable {
    /// Sampling interval unless a scenario sets its own; zero turns sampling off; nil: each case's default
    /// (`defaultInterval`).
    public var interval: Duration?
    /// Overrides every scenario's repetitions when set (`--repeat N` or `--repeat auto`; with `auto`, a
    /// scenario that asks for auto itself keeps its own target, minimum and maximum).
    public var repetitions: RepetitionPolicy?
    /// Smoke-test mode: one repetition and every duration argument of every step divided by 4.
    public var quick = false
    /// Rows the sampler reserves per case before merging neighbours.
    public var sampleCapacity = 16_384
    /// Memory limit and warnings, over the scenario files' own.
    public var memory = MemoryOptions()
    /// `--peak`: overrides every scenario's `peak:`; nil lets the files decide (sampled when they do not say).
    public var peakMode: PeakMode?
    /// `--timeout`: the per-case limit, over the files'.
    public var timeout: Duration?
    /// `--attribute`: one more case per strategy that records allocation stacks (its figures never gate);
    /// nil lets the files decide (`attribution: true`).
    public var attribution: AttributionRequest?
    /// `--heap-graph`: the same extra case per strategy captures its heap as a graph; nil: off.
    public var heapGraph: HeapGraphRequest?
    /// `--suppressions FILE`: known leaks left out of every case's leak verdicts, besides a scenario's own.
    public var suppressions: [LeakSuppression] = []
    /// `--jobs`: cases of scenarios that allow it (`parallel: true`) run this many at once; 1: one at a time.
    public var jobs = 1
    /// `--resume`: run only the cases an interrupted run into the same folder did not finish.
    public var resume = false
    /// `--allocator`: the malloc programs run on, over their strategies' `allocator:`; nil lets the files decide
    /// (jemalloc when they do not say). glibc only for programs (an in-process workload runs on the jemalloc memharness
    /// links).
    public var allocator: Allocator?

    /// The sampling interval when neither the command line nor the scenario sets one: 1 ms, and 10 ms for a
    /// server under load. A server's agent counts every allocation, and each sample carries the highest live bytes
    /// since the one before it, so its exact peaks lose nothing at 10 ms; the sampler's own cost is jemalloc's
    /// `epoch` (every arena's statistics merged), which took 8.4% of a loaded server's CPU at 1 ms and 2.1% at
    /// 10 ms (`make bench-server-throughput`).
    public static func defaultInterval(serving: Bool) -> Duration {
        serving ? .milliseconds(10) : .milliseconds(1)
    }

    /// Options with these values (and 16,384 reserved sample rows per case).
    public init(
        interval: Duration? = nil, repetitions: RepetitionPolicy? = nil, quick: Bool = false,
        memory: MemoryOptions = MemoryOptions(), peakMode: PeakMode? = nil, timeout: Duration? = nil,
        attribution: AttributionRequest? = nil, jobs: Int = 1, resume: Bool = false
    ) {
        self.interval = interval
        self.repetitions = repetitions
        self.quick = quick
        self.memory = memory
        self.peakMode = peakMode
        self.timeout = timeout
        self.attribution = attribution
        self.jobs = jobs
        self.resume = resume
    }
}

/// `--shard I/N`: the I-th of N deterministic, round-robin subsets of a run's cases.
public struct Shard: Sendable, Hashable {
    /// From 1.
    public var index: Int
    public var count: Int

    /// Nil unless `1 <= index <= count`.
    public init?(index: Int, count: Int) {
        guard count >= 1, (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// Reads `I/N`.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 2, let index = parts[0], let count = parts[1] else { return nil }
        self.init(index: index, count: count)
    }

    /// True when the case at `position` (from 0, in run order) belongs to this shard.
    public func contains(position: Int) -> Bool { position % count == index - 1 }
}

/// What the user asked to run: everything the command line says, before any file is read.
public struct RunRequest: Sendable {
    /// Scenario files or names; empty: every file of `scenariosDirectory`.
    public var scenarios: [String] = []
    public var scenariosDirectory = "Scenarios"
    /// `--set NAME=VALUE` overrides; one of them may list several values (a sweep).
    public var overrides: [String] = []
    /// Scenarios given as values rather than files (`memharness profile` makes one); with these and no
    /// `scenarios`, no file is read.
    public var inlineScenarios: [ScenarioSpec] = []
    public var options = RunOptions()
    public var shard: Shard?

    public init(scenarios: [String] = [], scenariosDirectory: String = "Scenarios", overrides: [String] = []) {
        self.scenarios = scenarios
        self.scenariosDirectory = scenariosDirectory
        self.overrides = overrides
    }
}

/// One scenario as it will run: its spec (named for its sweep point in a sweep) and its cases.
public struct PlannedScenario: Sendable {
    /// The spec, with overrides applied; in a sweep its name is `scenario @ key=value`.
    public var spec: ScenarioSpec
    /// The scenario's own name, without the sweep point.
    public var baseName: String
    /// The value swept at this point, as written and as a value; nil without a sweep.
    public var sweepPoint: (label: String, value: ParameterValue)?
    /// Every case of this scenario (all repetitions and strategies), before sharding. With `repetitions: auto`,
    /// the first `minimum` repetitions: execution adds more while the stopping rule asks for them.
    public var cases: [CaseSpec]
    /// How many repetitions each strategy runs, after `--repeat` and `--quick`.
    public var repetitions: RepetitionPolicy
    /// The figures whose 95% intervals decide when an auto scenario stops (`AdaptiveRepetitions.watchedFigures`).
    public var watchedFigures: [Figure]
}

/// A run, fully validated: every scenario of every sweep point and the cases this process runs.
public struct RunPlan: Sendable {
    public var scenarios: [PlannedScenario]
    /// The swept key; nil without a sweep.
    public var sweepKey: String?
    public var options: RunOptions
    /// The cases to run, in run order (this shard's only).
    public var cases: [CaseSpec]

    /// Names of the scenarios whose cases may run beside others (`parallel: true`).
    public var parallelScenarios: Set<String> = []

    /// True when `spec` may run while other cases run (its scenario says so).
    public func mayRunConcurrently(_ spec: CaseSpec) -> Bool { parallelScenarios.contains(spec.scenario) }

    /// True when some case needs every allocation counted.
    public var needsExactPeaks: Bool { cases.contains { $0.peakMode == .exact } }

    /// True when some case needs the agent: exact peaks, allocation stacks, an external program.
    public var needsAgent: Bool { cases.contains(where: \.needsAgent) }

    /// The plan without the heap graphs nobody asked for on the command line (those of `expect:` and heap-graph
    /// thresholds), for a launcher that cannot capture heaps (no agent, or cases in this process): an expectation
    /// is then decided by tracked objects and `repeat` steps, and one that cannot be fails its check saying why.
    public func withoutImplicitHeapGraphs() -> RunPlan {
        func strip(_ cases: [CaseSpec]) -> [CaseSpec] {
            cases.compactMap { spec in
                guard spec.heapGraph?.capturesIterations == false else { return spec }
                var spec = spec
                spec.heapGraph = nil
                return spec.isInstrumented ? spec : nil
            }
        }
        var plan = self
        plan.cases = strip(cases)
        for index in plan.scenarios.indices { plan.scenarios[index].cases = strip(scenarios[index].cases) }
        return plan
    }
}

/// Turns a request into a plan: reads and validates every scenario file, applies overrides, expands
/// a sweep, applies the run's options and picks the shard. Everything wrong is found here, before work.
public enum RunPlanner {
    public static func plan(_ request: RunRequest, catalog: WorkloadCatalog) throws(RunError) -> RunPlan {
        let points: [(label: String, specs: [ScenarioSpec])]
        var sweepKey: String?
        do throws(ScenarioError) {
            let files =
                request.inlineScenarios.isEmpty || !request.scenarios.isEmpty
                ? try ScenarioFiles.load(request.scenarios, directory: request.scenariosDirectory, catalog: catalog)
                : []
            let specs = files + request.inlineScenarios
            let sweeps = request.overrides.filter(SweepSpec.isSweep)
            if sweeps.count > 1 {
                throw ScenarioError.invalidOverride(
                    sweeps[1], reason: "only one --set may list several values; this run already sweeps \(sweeps[0])")
            }
            let fixed = try applyOverrides(
                request.overrides.filter { !SweepSpec.isSweep($0) }, to: specs, catalog: catalog)
            if let text = sweeps.first {
                let sweep = try SweepSpec(parsing: text)
                sweepKey = sweep.key
                points = try zip(sweep.values, sweep.overrides).map { value, override throws(ScenarioError) in
                    ("\(sweep.key)=\(value)", try applyOverrides([override], to: fixed, catalog: catalog))
                }
            } else {
                points = [("", fixed)]
            }
        } catch {
            throw .scenario(error)
        }
        let options = request.options
        let problems = problems(of: points.flatMap(\.specs), options: options, sharded: request.shard != nil)
        guard problems.isEmpty else { throw .options(problems) }
        let scenarios = points.flatMap { point in
            point.specs.map { spec in planned(spec, sweepKey: sweepKey, pointLabel: point.label, options: options) }
        }
        var cases = scenarios.flatMap(\.cases)
        if let shard = request.shard {
            cases = cases.enumerated().filter { shard.contains(position: $0.offset) }.map(\.element)
        }
        var plan = RunPlan(scenarios: scenarios, sweepKey: sweepKey, options: options, cases: cases)
        plan.parallelScenarios = Set(scenarios.filter(\.spec.parallel).map(\.spec.name))
        return plan
    }

    /// What in the options does not fit the scenarios, one message each.
    static func problems(of specs: [ScenarioSpec], options: RunOptions, sharded: Bool = false) -> [String] {
        var problems: [String] = []
        // The command line checks these too, against the same table; a library caller gets them before any case.
        if case .fixed(let repetitions)? = options.repetitions,
            let problem = OptionRanges.problem(repetitions, in: OptionRanges.repetitions)
        {
            problems.append("repetitions " + problem)
        }
        if let interval = options.interval,
            let problem = OptionRanges.problem(interval, in: OptionRanges.interval, offAllowed: true)
        {
            problems.append("sampling interval " + problem)
        }
        if let timeout = options.timeout, let problem = OptionRanges.problem(timeout, in: OptionRanges.timeout) {
            problems.append("case time limit " + problem)
        }
        if options.sampleCapacity < 1 {
            problems.append("sample capacity \(options.sampleCapacity) must be at least 1")
        }
        problems += options.memory.problems(for: specs)
        for spec in specs where sharded {
            guard case .auto = repetitions(of: spec, options: options) else { continue }
            problems.append(
                "\(spec.file): --shard cannot split `repetitions: auto` (the count is decided while the cases run); "
                    + "give a fixed count with --repeat N")
        }
        for spec in specs where options.allocator == .glibc && spec.strategies.contains(where: { $0.program == nil }) {
            problems.append(
                "\(spec.location(ofKey: "workload")): --allocator glibc runs programs only "
                    + "(`workload: command`, servers, `profile`); workload \(spec.workload) runs inside memharness's "
                    + "own process, which links jemalloc (valid choice for it: jemalloc)")
        }
        for spec in specs where (spec.interval ?? options.interval) == .zero && options.memory.budget(for: spec) != nil
        {
            problems.append("\(spec.file): a memory limit or warning needs the sampler; use an --interval above 0")
        }
        return problems.uniqued()
    }

    /// One scenario at one sweep point (`pointLabel` empty without a sweep) with its cases.
    static func planned(_ spec: ScenarioSpec, sweepKey: String?, pointLabel: String, options: RunOptions)
        -> PlannedScenario
    {
        var spec = spec
        let baseName = spec.name
        var point: (String, ParameterValue)?
        if let sweepKey, let value = sweptValue(sweepKey, in: spec) {
            point = (pointLabel, value)
        }
        if !pointLabel.isEmpty { spec.name = "\(baseName) @ \(pointLabel)" }
        if let timeout = options.timeout { spec.timeout = timeout }
        return PlannedScenario(
            spec: spec, baseName: baseName, sweepPoint: point, cases: cases(of: spec, options: options),
            repetitions: repetitions(of: spec, options: options),
            watchedFigures: AdaptiveRepetitions.watchedFigures(
                ranking: spec.ranking, exactPeaks: (options.peakMode ?? spec.peakMode) == .exact))
    }

    /// A scenario's repetitions under the run's options: one with `--quick`; `--repeat N` or `--repeat auto`
    /// over the file's (a file's own auto settings stay under `--repeat auto`).
    static func repetitions(of scenario: ScenarioSpec, options: RunOptions) -> RepetitionPolicy {
        if options.quick { return .fixed(1) }
        switch (options.repetitions, scenario.repetitions) {
        case (.auto?, .auto): return scenario.repetitions
        case (let asked?, _): return asked
        case (nil, let own): return own
        }
    }

    /// The cases of one scenario, repetition by repetition, strategy by strategy: strategies
    /// alternate within a repetition so slow drifts of the machine spread over all of them.
    public static func cases(of scenario: ScenarioSpec, options: RunOptions) -> [CaseSpec] {
        // `plan` refuses repetitions below 1; a direct caller passing 0 gets one case, not a trap on `1...0`.
        let policy = repetitions(of: scenario, options: options)
        let repetitions = max(1, policy.minimum)
        let steps = options.quick ? scenario.steps.map(quartered) : scenario.steps
        let suppressions = (options.suppressions + scenario.suppressions).uniqued()
        func spec(_ strategy: StrategyPlan, repetition: Int) -> CaseSpec {
            var spec = CaseSpec(
                scenario: scenario.name, workload: scenario.workload, strategy: strategy.name,
                repetition: repetition, parameters: strategy.parameters, steps: steps,
                samplingIntervalNanoseconds: (scenario.interval ?? options.interval
                    ?? RunOptions.defaultInterval(
                        serving: strategy.program?.server?.hasLoadSteps == true)).nanoseconds,
                sampleCapacity: options.sampleCapacity,
                settleNanoseconds: scenario.settle.nanoseconds, timeoutNanoseconds: scenario.timeout.nanoseconds,
                memoryBudget: options.memory.budget(for: scenario),
                expectation: strategy.expect.flatMap(LeakExpectation.init(rawValue:)),
                peakMode: options.peakMode ?? scenario.peakMode ?? .sampled, gaugeNames: scenario.gaugeNames,
                program: strategy.program.map { CommandTemplate.filled($0, with: strategy.parameters) })
            spec.suppressions = suppressions.isEmpty ? nil : suppressions
            spec.allocator = strategy.program == nil ? nil : options.allocator ?? strategy.allocator ?? .jemalloc
            return spec
        }
        let measured = (1...repetitions).flatMap { repetition in
            scenario.strategies.map { spec($0, repetition: repetition) }
        }
        // Allocation stacks inflate the figures they are recorded with: one more case per strategy, after
        // the measured ones, whose figures never reach a median, a ranking or a gate. It is numbered after
        // the most repetitions the scenario may run, so auto repetitions added later never share its number.
        // The heap graph gets such a case too (tracking every block slows allocation, never the figures of the
        // measured repetitions). A strategy with neither gets no extra case.
        let attribution = options.attribution ?? scenario.attribution
        return measured
            + scenario.strategies.flatMap { strategy in
                var instrumented = spec(strategy, repetition: policy.maximum + 1)
                instrumented.attribution = attribution
                instrumented.heapGraph = heapGraph(of: strategy, in: scenario, options: options)
                return Self.instrumentedCases(instrumented)
            }
    }

    /// The instrumented cases that record what `spec` asks for (stacks, a heap graph, or both; none when it asks
    /// for neither). A workload's stacks and its heap graph are recorded in two cases, the heap's numbered next:
    /// capturing and naming a heap allocates in the case's own process (symbol tables, the graph), which a stack
    /// profile would count as the workload's, and a snapshot of the live set taken then would replace the one at
    /// the workload's true peak. A program's heap is captured by the agent and named here, so one run records
    /// both.
    static func instrumentedCases(_ spec: CaseSpec) -> [CaseSpec] {
        guard spec.isInstrumented else { return [] }
        guard spec.program == nil, spec.attribution != nil, spec.heapGraph != nil else { return [spec] }
        var stacks = spec
        stacks.heapGraph = nil
        var heap = spec
        heap.attribution = nil
        heap.repetition += 1
        return [stacks, heap]
    }

    /// The heap graph a strategy's instrumented case captures: `--heap-graph`'s, else one whenever the file expects
    /// something of the strategy's leaks (`expect:`) or gates on a heap-graph figure of it (`leakedBlocks`...), so
    /// that an expectation or a threshold is never left without its evidence (a capture after teardown only: the
    /// generations of `--heap-graph` cost a capture per iteration); nil otherwise.
    static func heapGraph(of strategy: StrategyPlan, in scenario: ScenarioSpec, options: RunOptions)
        -> HeapGraphRequest?
    {
        if let request = options.heapGraph { return request }
        let gated = scenario.thresholds.contains { threshold in
            var references = [threshold.subject]
            if case .relative(_, let other) = threshold.limit { references.append(other) }
            return references.contains { $0.strategy == strategy.name && $0.figure.isHeapGraph }
        }
        let capturing = strategy.program?.server?.capturesRounds ?? false
        return strategy.expect != nil || gated || capturing ? .afterTeardown : nil
    }

    /// `--quick`: every duration argument divided by 4, inside `repeat` bodies too.
    static func quartered(_ step: StepInvocation) -> StepInvocation {
        var step = step
        for (name, value) in step.arguments.values {
            if case .duration(let nanoseconds) = value {
                step.arguments[name] = .duration(nanoseconds: nanoseconds / 4)
            }
        }
        step.body = step.body?.map(quartered)
        return step
    }
}
