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

    /// `calibration 3.1 s (9 cases), live-query 20.4 s (15 cases)`, slowest first; nil without case times.
    public var timeSummary: String? {
        let times = scenarioTimes.sorted { $0.nanoseconds > $1.nanoseconds }
        guard !times.isEmpty else { return nil }
        let total = times.reduce(Int64(0)) { $0 + $1.nanoseconds }
        let cases = times.reduce(0) { $0 + $1.cases }
        let elapsed = elapsedNanoseconds.map { " in \(Units.formatSeconds($0)) of wall time" } ?? ""
        return "\(cases) cases took \(Units.formatSeconds(total))\(elapsed): "
            + times.map { "\($0.scenario) \(Units.formatSeconds($0.nanoseconds)) (\($0.cases))" }.joined(
                separator: ", ")
    }
}

extension Units {
    /// `3.1 s`.
    public static func formatSeconds(_ nanoseconds: Int64) -> String {
        fixed(Double(nanoseconds) / 1e9, decimals: 1) + " s"
    }
}
