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
                    scenarios[index].instrumentedCases += run.instrumentedCases
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
