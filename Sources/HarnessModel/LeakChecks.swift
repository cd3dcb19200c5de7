/// Leak verdicts as checks: a strategy that leaks without `expect: leaks` fails the gate; one
/// declared leaking passes whether or not the leak shows (a missing leak is said in the message). An
/// expectation that could not be assessed fails too: an expectation is never skipped in silence.
public enum LeakChecks {
    public static func checks(_ run: ScenarioRun) -> [CheckResult] {
        StrategyLeakSummary.summaries(run).compactMap { summary in
            guard summary.verdict != .notAssessed else { return notAssessed(summary, in: run) }
            let survivors = summary.survivors.map {
                "\($0.typeName) \($0.minimum == $0.maximum ? "\($0.minimum)" : "\($0.minimum)–\($0.maximum)")"
            }
            .joined(separator: ", ")
            let growth = summary.growth.map {
                "\(Units.formatBytes($0.medianSlopeBytesPerIteration)) ± "
                    + "\(Units.formatBytes($0.medianBoundBytesPerIteration))/iteration"
            }
            .joined(separator: ", ")
            let unreachable = summary.heapGraph.map(LeakAnalysis.unreachable)
            let actual = [
                survivors.isEmpty ? nil : "survivors: \(survivors)", growth.isEmpty ? nil : "growth \(growth)",
                unreachable,
            ]
            .compactMap { $0 }.joined(separator: "; ")
            let expected = summary.expectation?.rawValue ?? "leak-free"
            let message: String
            switch summary.outcome {
            case .unexpectedLeak:
                message =
                    "\(run.name) / \(summary.strategy) leaks ("
                    + (summary.assessedRepetitions == 0
                        ? "" : "\(summary.leakingRepetitions) of \(summary.assessedRepetitions) repetitions: ")
                    + summary.reasons.joined(separator: "; ")
                    + "); it is expected to be leak-free. See the Leaks section of `\(run.name)` in report.md"
            case .expectedLeakNotSeen:
                message =
                    "\(run.name) / \(summary.strategy) is declared `expect: leaks` but showed none: the scenario "
                    + "may no longer show the pitfall"
            case .asExpected, .notAssessed:
                message = "\(run.name) / \(summary.strategy): \(summary.verdict.rawValue), as expected"
            }
            return CheckResult(
                kind: .leak, scenario: run.name, strategy: summary.strategy,
                name: "\(summary.strategy): expected \(expected)", passed: summary.outcome != .unexpectedLeak,
                actual: summary.verdict.rawValue + (actual.isEmpty ? "" : " (\(actual))"), limit: "expect \(expected)",
                margin: summary.outcome.rawValue, message: message
            )
        }
    }

    /// The failed check of a strategy whose expectation no evidence could decide; nil without an expectation.
    static func notAssessed(_ summary: StrategyLeakSummary, in run: ScenarioRun) -> CheckResult? {
        guard let expected = summary.expectation?.rawValue else { return nil }
        // Every strategy with an expectation gets a heap graph: only a failed capture (or case) ends up here.
        let why = summary.reasons.joined(separator: "; ")
        return CheckResult(
            kind: .leak, scenario: run.name, strategy: summary.strategy,
            name: "\(summary.strategy): expected \(expected)", passed: false, actual: "not assessed",
            limit: "expect \(expected)", margin: summary.outcome.rawValue,
            message:
                "\(run.name) / \(summary.strategy) is declared `expect: \(expected)` but could not be assessed (\(why)); "
                + "track its objects (context.track), add a repeat step, or see the heap graph's failure in report.md")
    }
}
