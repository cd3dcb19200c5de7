import HarnessModel
import Measurement
import WorkloadKit

extension RunReport {
    /// The report of a run, the Runner's last stage: one `ScenarioRun` per planned scenario (with the results
    /// of its cases that ran here), and a sweep summary per scenario when the plan sweeps. A pure function of
    /// its arguments; `elapsedNanoseconds` is the run's wall time (nil: not known).
    public init(
        plan: RunPlan, results: [CaseResult], environment: EnvironmentInfo, generatedAt: String,
        elapsedNanoseconds: Int64? = nil
    ) {
        let byScenario = Dictionary(grouping: results, by: \.scenario)
        let scenarios = plan.scenarios.map { planned in
            let results = byScenario[planned.spec.name] ?? []
            var run = ScenarioRun(planned: planned, results: results.filter { !$0.isInstrumented })
            run.instrumentedCases = results.filter(\.isInstrumented)
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
        self.elapsedNanoseconds = elapsedNanoseconds
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
        ratePhase = spec.ratePhase
        if case .auto(let rule) = planned.repetitions { adaptiveRepetitions = rule }
    }
}

extension MemoryBudget {
    /// One line for reports: `limit 256.00 MiB, warning at 204.80 MiB (allocated)`.
    var summary: String {
        var parts: [String] = []
        if let limitBytes { parts.append("limit \(Units.formatBytes(limitBytes))") }
        if let warningBytes { parts.append("warning at \(Units.formatBytes(warningBytes))") }
        return parts.joined(separator: ", ") + " (\(footprint.rawValue))"
    }
}
