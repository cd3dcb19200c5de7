import HarnessModel

/// Evaluates a run's checks and turns them into the run's exit status (Reports words the checks for the record).
public enum Gate {
    /// Thresholds of every scenario, leak expectations, then the baseline comparison.
    public static func checks(
        for report: RunReport, baseline: BaselineReference? = nil, policy: GatePolicy = GatePolicy()
    ) -> [Check] {
        var checks =
            policy.checkThresholds
            ? report.scenarios.flatMap { run in
                ThresholdJudgement.evaluate(run.thresholds, in: run).map { Check(scenario: run.name, $0) }
            } : []
        checks += report.scenarios.flatMap(LeakChecks.checks)
        if let baseline {
            checks += policy.baseline.compare(report, with: baseline.baseline, baselineFile: baseline.file)
        }
        return checks
    }

    /// `caseFailed` when a case did not complete (a kill by the memory limit aside), else `finding` when
    /// a check failed (or, with `failOnMemoryLimit`, a case was killed by its limit), else `ok`.
    /// A kill is otherwise a result shown in the report, like a peak: shipped scenarios kill strategies on purpose.
    public static func status(of report: RunReport, checks: [Check], policy: GatePolicy = GatePolicy())
        -> ExitStatus
    {
        let cases = report.scenarios.flatMap(\.cases)
        // An attributed case that failed is a case that could not be measured as asked, though it never gates.
        let everyCase = cases + report.scenarios.flatMap(\.instrumentedCases)
        if everyCase.contains(where: { $0.status != .ok && $0.status != .killedByMemoryLimit }) { return .caseFailed }
        if checks.contains(where: { !$0.passed }) { return .finding }
        if policy.failOnMemoryLimit && cases.contains(where: { $0.status == .killedByMemoryLimit }) { return .finding }
        return .ok
    }
}

/// One check of a run, judged: a threshold, a baseline comparison or a leak expectation, with what decided it (the
/// words are the renderers': Reports makes the record's `CheckResult` of it).
public struct Check: Sendable, Hashable {
    /// What was checked, and everything the check's words need.
    public enum Judgement: Sendable, Hashable {
        case threshold(ThresholdJudgement)
        case baseline(BaselineJudgement)
        case leak(StrategyLeakSummary)
    }

    public var scenario: String
    public var strategy: String
    public var passed: Bool
    public var judgement: Judgement

    public init(scenario: String, strategy: String, passed: Bool, judgement: Judgement) {
        self.scenario = scenario
        self.strategy = strategy
        self.passed = passed
        self.judgement = judgement
    }

    /// The check of a threshold of scenario `scenario`.
    public init(scenario: String, _ threshold: ThresholdJudgement) {
        self.init(
            scenario: scenario, strategy: threshold.threshold.subject.strategy, passed: threshold.passed,
            judgement: .threshold(threshold))
    }

    /// Which kind of check it is.
    public var kind: CheckResult.Kind {
        switch judgement {
        case .threshold: return .threshold
        case .baseline: return .baseline
        case .leak: return .leak
        }
    }
}
