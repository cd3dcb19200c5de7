/// Where a run's time went: the wall time of each scenario's cases (their processes' start and end
/// included), so a slow scenario shows at a glance.
public struct ScenarioTime: Sendable, Hashable {
    public var scenario: String
    /// Cases with a known wall time.
    public var cases: Int
    /// Their wall times added up, nanoseconds (cases that ran side by side count each).
    public var nanoseconds: Int64

    public init(scenario: String, cases: Int, nanoseconds: Int64) {
        self.scenario = scenario
        self.cases = cases
        self.nanoseconds = nanoseconds
    }
}

extension RunReport {
    /// Each scenario's case time, in report order; empty for records written before case times were kept.
    public var scenarioTimes: [ScenarioTime] {
        scenarios.compactMap { run in
            let times = (run.cases + run.attributedCases).compactMap(\.wallNanoseconds)
            return times.isEmpty
                ? nil : ScenarioTime(scenario: run.name, cases: times.count, nanoseconds: times.reduce(0, +))
        }
    }
}
