import Measurement
import WorkloadKit

/// A case starting or finishing, for progress display.
public enum RunEvent: Sendable {
    case started(index: Int, total: Int, spec: CaseSpec)
    case finished(index: Int, total: Int, result: CaseResult, elapsedNanoseconds: Int64)
}

/// Runs a plan's cases, one after another, each to its outcome.
public enum RunExecution {
    /// Runs every case of `plan` with `launcher`, in plan order; `events` hears of each start and end.
    public static func execute(
        _ plan: RunPlan, launcher: some CaseLaunching, events: (RunEvent) -> Void = { _ in }
    ) -> [CaseResult] {
        var results: [CaseResult] = []
        for (index, spec) in plan.cases.enumerated() {
            // A signal stops the run between cases (the running case's process was killed by the handler).
            guard Interruption.signal == nil else { break }
            let result = execute(spec, index: index, total: plan.cases.count, launcher: launcher, events: events)
            // The case the signal cut short (its process killed) is not a result.
            guard Interruption.signal == nil else { break }
            results.append(result)
        }
        return results
    }

    /// Runs one case (the `index`-th of `total`, from 0) and names its outcome.
    static func execute(
        _ spec: CaseSpec, index: Int, total: Int, launcher: some CaseLaunching, events: (RunEvent) -> Void
    ) -> CaseResult {
        events(.started(index: index + 1, total: total, spec: spec))
        let start = MonotonicClock.nanoseconds()
        var result = CaseResult(
            scenario: spec.scenario, workload: spec.workload, strategy: spec.strategy, repetition: spec.repetition,
            expectation: spec.expectation, outcome: launcher.launch(spec))
        result.attributed = spec.attribution != nil
        let elapsed = MonotonicClock.nanoseconds() - start
        events(.finished(index: index + 1, total: total, result: result, elapsedNanoseconds: elapsed))
        return result
    }
}

extension RunReport {
    /// The report of a run: one `ScenarioRun` per planned scenario (with the results of its cases that
    /// ran here), and a sweep summary per scenario when the plan sweeps.
    public init(plan: RunPlan, results: [CaseResult], environment: EnvironmentInfo, generatedAt: String) {
        let byScenario = Dictionary(grouping: results, by: \.scenario)
        let scenarios = plan.scenarios.map { planned in
            let results = byScenario[planned.spec.name] ?? []
            var run = ScenarioRun(planned: planned, results: results.filter { !$0.attributed })
            run.attributedCases = results.filter(\.attributed)
            return run
        }
        var sweeps: [SweepSummary]?
        if let key = plan.sweepKey {
            var order: [String] = []
            var points: [String: [(label: String, value: ParameterValue, run: ScenarioRun)]] = [:]
            for (planned, run) in zip(plan.scenarios, scenarios) {
                guard let point = planned.sweepPoint else { continue }
                if points[planned.baseName] == nil { order.append(planned.baseName) }
                points[planned.baseName, default: []].append((point.label, point.value, run))
            }
            sweeps = order.compactMap { name in
                points[name].map { SweepSummary(scenario: name, key: key, points: $0) }
            }
        }
        self.init(generatedAt: generatedAt, environment: environment, scenarios: scenarios, sweeps: sweeps)
    }
}

extension ScenarioRun {
    /// A planned scenario with the results of its cases.
    init(planned: PlannedScenario, results: [CaseResult]) {
        let spec = planned.spec
        let budget =
            planned.cases.first?.memoryBudget.map { [NamedValue(name: "memoryBudget", value: $0.summary)] } ?? []
        self.init(
            name: spec.name, file: spec.file, workload: spec.workload, summary: spec.summary,
            parameters: spec.parameterOrder.compactMap { name in
                spec.parameters[name].map { NamedValue(name: name, value: $0.description) }
            } + budget,
            strategies: spec.strategies.map(\.name), steps: spec.steps.map(\.phase),
            repetitions: results.map(\.repetition).max() ?? 0, cases: results)
        thresholds = spec.thresholds
        ranking = spec.ranking
    }
}
