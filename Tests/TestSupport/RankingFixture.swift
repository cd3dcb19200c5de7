import HarnessModel

/// Made-up cases of one scenario with one phase, `burst`, and a `callbacks` metric: what the ranking and its
/// reading are tested on.
public enum RankingFixture {
    /// A case of `strategy` whose allocated peak is `net` bytes above a 1 MB baseline, in the run and in `burst`.
    public static func result(_ strategy: String, _ repetition: Int, net: Int, status: CaseStatus = .ok)
        -> CaseResult
    {
        CaseResult.draft(strategy: strategy, repetition: repetition, status: status) { result in
            result.baselineAllocatedBytes = 1_000_000
            result.peak.allocatedBytes = 1_000_000 + net
            result.phases = [
                PhaseResult(
                    name: "burst", startNanoseconds: 0, endNanoseconds: 1, peakAllocatedBytes: 1_000_000 + net,
                    peakResidentBytes: 0)
            ]
            result.metrics = [Metric(name: "callbacks", value: Double(repetition), unit: .count)]
        }
    }

    /// Scenario `s` of `cases`, comparing `strategies` in this order.
    public static func run(_ cases: [CaseResult], strategies: [String]) -> ScenarioRun {
        ScenarioRun(
            name: "s", file: "s.yaml", workload: "w", summary: "", parameters: [], strategies: strategies,
            steps: ["burst"], repetitions: 3, cases: cases)
    }

    /// Three repetitions each of `unbounded` (a median net peak of 142 MB) and `signal` (10 MB): 14.2x apart.
    public static let unboundedAndSignal = [
        result("unbounded", 1, net: 140_000_000), result("signal", 1, net: 10_000_000),
        result("unbounded", 2, net: 150_000_000), result("signal", 2, net: 11_000_000),
        result("unbounded", 3, net: 142_000_000), result("signal", 3, net: 10_000_000),
    ]
}
