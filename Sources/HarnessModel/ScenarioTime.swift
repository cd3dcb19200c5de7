/// Where a run's time went: the wall time of each scenario's cases (their processes' start and end
/// included), so a slow scenario shows at a glance.
public struct ScenarioTime: Sendable, Hashable {
    public var scenario: String
    /// Measured cases (repetitions) with a known wall time.
    public var cases: Int
    /// Instrumented cases with a known wall time, counted apart.
    public var instrumentedCases: Int
    /// The wall times of both added up, nanoseconds (cases that ran side by side count each).
    public var nanoseconds: Int64

    public init(scenario: String, cases: Int, instrumentedCases: Int = 0, nanoseconds: Int64) {
        self.scenario = scenario
        self.cases = cases
        self.instrumentedCases = instrumentedCases
        self.nanoseconds = nanoseconds
    }
}

extension RunReport {
    /// Each scenario's case time, in report order; empty for records written before case times were kept.
    public var scenarioTimes: [ScenarioTime] {
        scenarios.compactMap { run in
            let measured = run.cases.compactMap(\.wallNanoseconds)
            let instrumented = run.instrumentedCases.compactMap(\.wallNanoseconds)
            return measured.isEmpty && instrumented.isEmpty
                ? nil
                : ScenarioTime(
                    scenario: run.name, cases: measured.count, instrumentedCases: instrumented.count,
                    nanoseconds: (measured + instrumented).reduce(0, +))
        }
    }
}
