import HarnessModel

/// Options of a run that apply to every scenario.
public struct RunOptions: Sendable {
    /// Sampling interval unless a scenario sets its own; zero turns sampling off.
    public var interval: Duration = .milliseconds(1)
    /// Overrides every scenario's repetitions when set.
    public var repetitions: Int?
    /// Smoke-test mode: one repetition and every duration argument of every step divided by 4.
    public var quick = false
    /// Rows the sampler reserves per case before merging neighbours.
    public var sampleCapacity = 16_384
    /// Memory limit and warnings, over the scenario files' own.
    public var memory = MemoryOptions()
    /// `--peak`: overrides every scenario's `peak:`; nil lets the files decide (sampled when they do not say).
    public var peakMode: PeakMode?

    public init(interval: Duration = .milliseconds(1), repetitions: Int? = nil, quick: Bool = false) {
        self.interval = interval
        self.repetitions = repetitions
        self.quick = quick
    }
}

/// The cases of a run, in run order: scenario by scenario, repetition by repetition, strategy by strategy.
///
/// Strategies alternate within a repetition so slow drifts of the machine spread over all of them.
public func planCases(_ scenarios: [ScenarioSpec], options: RunOptions) -> [CaseSpec] {
    var cases: [CaseSpec] = []
    for scenario in scenarios {
        let repetitions = options.quick ? 1 : (options.repetitions ?? scenario.repetitions)
        let steps = options.quick ? scenario.steps.map(quartered) : scenario.steps
        let interval = scenario.interval ?? options.interval
        for repetition in 1...repetitions {
            for strategy in scenario.strategies {
                cases.append(CaseSpec(
                    scenario: scenario.name, workload: scenario.workload, strategy: strategy.name,
                    repetition: repetition, parameters: strategy.parameters, steps: steps,
                    samplingIntervalNanoseconds: interval.nanoseconds, sampleCapacity: options.sampleCapacity,
                    settleNanoseconds: scenario.settle.nanoseconds, timeoutNanoseconds: scenario.timeout.nanoseconds,
                    memoryBudget: options.memory.budget(for: scenario),
                    expectation: strategy.expect.flatMap(LeakExpectation.init(rawValue:)),
                    peakMode: options.peakMode ?? scenario.peakMode ?? .sampled
                ))
            }
        }
    }
    return cases
}

private func quartered(_ step: StepInvocation) -> StepInvocation {
    var step = step
    for (name, value) in step.arguments.values {
        if case let .duration(nanoseconds) = value { step.arguments[name] = .duration(nanoseconds: nanoseconds / 4) }
    }
    step.body = step.body?.map(quartered)
    return step
}

/// Applies `--set name=value` overrides: `name` is a parameter, `step.argument` a step's argument
/// (by phase name or step name). Every override must match something.
public func applyOverrides(_ overrides: [String], to scenarios: [ScenarioSpec], catalog: WorkloadCatalog) throws(HarnessError) -> [ScenarioSpec] {
    var scenarios = scenarios
    for text in overrides {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .invalidOverride(text, reason: "expected NAME=VALUE, e.g. payloadSize=8KiB or burst.duration=2s")
        }
        let (key, valueText) = (parts[0], parts[1])
        var matched = false
        var problems: [String] = []
        for index in scenarios.indices {
            guard let workload = catalog.workload(named: scenarios[index].workload) else { continue }
            let descriptor = workload.descriptor
            let keyParts = key.split(separator: ".", maxSplits: 1).map(String.init)
            if keyParts.count == 1 {
                guard let spec = descriptor.parameters.first(where: { $0.name == key }) else {
                    problems.append("\(scenarios[index].name): no parameter '\(key)'; parameters: \(descriptor.parameters.map(\.name).joined(separator: ", "))")
                    continue
                }
                switch spec.parse(valueText) {
                case let .success(value):
                    scenarios[index].parameters[key] = value
                    for strategy in scenarios[index].strategies.indices {
                        scenarios[index].strategies[strategy].parameters[key] = value
                    }
                    matched = true
                case let .failure(failure):
                    throw .invalidOverride(text, reason: failure.message(text: valueText))
                }
            } else {
                let (stepKey, argument) = (keyParts[0], keyParts[1])
                let stepDescriptors = descriptor.steps + BuiltInStep.all
                for stepIndex in scenarios[index].steps.indices {
                    let step = scenarios[index].steps[stepIndex]
                    guard step.phase == stepKey || step.name == stepKey,
                          let stepDescriptor = stepDescriptors.first(where: { $0.name == step.name }) else { continue }
                    guard let spec = stepDescriptor.arguments.first(where: { $0.name == argument }) else {
                        problems.append("step '\(step.name)' has no argument '\(argument)'; arguments: \(stepDescriptor.arguments.map(\.name).joined(separator: ", "))")
                        continue
                    }
                    switch spec.parse(valueText) {
                    case let .success(value):
                        scenarios[index].steps[stepIndex].arguments[argument] = value
                        matched = true
                    case let .failure(failure):
                        throw .invalidOverride(text, reason: failure.message(text: valueText))
                    }
                }
                if !matched && problems.isEmpty {
                    problems.append("\(scenarios[index].name): no step '\(stepKey)'; steps: \(scenarios[index].steps.map(\.phase).joined(separator: ", "))")
                }
            }
        }
        if !matched {
            throw .invalidOverride(text, reason: problems.isEmpty ? "no scenario to apply it to" : problems.joined(separator: "; "))
        }
    }
    return scenarios
}


/// A case starting or finishing, for progress display.
public enum RunProgress: Sendable {
    case started(index: Int, total: Int, spec: CaseSpec)
    case finished(index: Int, total: Int, result: CaseResult, elapsed: Duration)
}

/// Runs every case with `launcher` and gathers the results per scenario.
public func runCases(_ cases: [CaseSpec], scenarios: [ScenarioSpec], launcher: CaseLauncher,
                     progress: (RunProgress) -> Void = { _ in }) -> [ScenarioRun] {
    var results: [CaseResult] = []
    for (index, spec) in cases.enumerated() {
        progress(.started(index: index + 1, total: cases.count, spec: spec))
        let start = ContinuousClock.now
        let result = launcher.run(spec)
        results.append(result)
        progress(.finished(index: index + 1, total: cases.count, result: result, elapsed: ContinuousClock.now - start))
    }
    return scenarios.map { scenario in
        var run = ScenarioRun(
            name: scenario.name, file: scenario.file, workload: scenario.workload, summary: scenario.summary,
            parameters: scenario.parameterOrder.compactMap { name in
                scenario.parameters[name].map { NamedValue(name: name, value: $0.description) }
            } + memoryBudgetParameters(scenario.name, cases),
            strategies: scenario.strategies.map(\.name),
            steps: scenario.steps.map(\.phase),
            repetitions: results.filter { $0.scenario == scenario.name }.map(\.repetition).max() ?? 0,
            cases: results.filter { $0.scenario == scenario.name }
        )
        run.thresholds = scenario.thresholds
        return run
    }
}
