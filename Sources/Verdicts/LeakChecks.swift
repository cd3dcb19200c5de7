import HarnessModel

/// Leak judgements as checks: a strategy that leaks without `expect: leaks` fails the gate; one declared leaking passes
/// whether or not the leak shows (a missing leak is said in the check's words). An expectation that could not be
/// assessed fails too: an expectation is never skipped in silence. A strategy that states nothing and shows no
/// evidence gets no check.
public enum LeakChecks {
    public static func checks(_ run: ScenarioRun) -> [Check] {
        StrategyLeakSummary.summaries(run).compactMap { summary in
            if summary.verdict == .notAssessed && summary.expectation == nil { return nil }
            // Every strategy with an expectation gets a heap graph: only a failed capture (or case) is not assessed.
            let passed = summary.verdict != .notAssessed && summary.outcome != .unexpectedLeak
            return Check(scenario: run.name, strategy: summary.strategy, passed: passed, judgement: .leak(summary))
        }
    }
}
