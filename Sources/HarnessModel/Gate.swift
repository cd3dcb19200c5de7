/// How a run is gated: which checks count and what fails it.
public struct GatePolicy: Sendable, Hashable {
    /// Check the scenario files' thresholds (false for `--quick`, whose shortened steps they were not written for).
    public var checkThresholds = true
    /// How figures are compared with a baseline.
    public var baseline = BaselinePolicy()
    /// A case stopped by its memory limit fails the run (exit 2); otherwise a kill is a result in the report.
    public var failOnMemoryLimit = false

    public init(
        checkThresholds: Bool = true, baseline: BaselinePolicy = BaselinePolicy(), failOnMemoryLimit: Bool = false
    ) {
        self.checkThresholds = checkThresholds
        self.baseline = baseline
        self.failOnMemoryLimit = failOnMemoryLimit
    }
}

/// A baseline to compare with, and the file it came from (for messages).
public struct BaselineReference: Sendable, Hashable {
    public var baseline: Baseline
    public var file: String
    public init(baseline: Baseline, file: String) {
        self.baseline = baseline
        self.file = file
    }
}

/// Evaluates a run's checks and turns them into the run's exit status.
public enum Gate {
    /// Thresholds of every scenario, leak expectations, then the baseline comparison.
    public static func checks(
        for report: RunReport, baseline: BaselineReference? = nil, policy: GatePolicy = GatePolicy()
    ) -> [CheckResult] {
        var checks =
            policy.checkThresholds
            ? report.scenarios.flatMap { ThresholdEvaluator.evaluate($0.thresholds, in: $0) } : []
        checks += report.scenarios.flatMap(LeakChecks.checks)
        if let baseline {
            checks += policy.baseline.compare(report, with: baseline.baseline, baselineFile: baseline.file)
        }
        return checks
    }

    /// `caseFailed` when a case did not complete (a kill by the memory limit aside), else `finding` when
    /// a check failed (or, with `failOnMemoryLimit`, a case was killed by its limit), else `ok`.
    /// A kill is otherwise a result shown in the report, like a peak: shipped scenarios kill strategies on purpose.
    public static func status(of report: RunReport, checks: [CheckResult], policy: GatePolicy = GatePolicy())
        -> ExitStatus
    {
        let cases = report.scenarios.flatMap(\.cases)
        // An attributed case that failed is a case that could not be measured as asked, though it never gates.
        let everyCase = cases + report.scenarios.flatMap(\.attributedCases)
        if everyCase.contains(where: { $0.status != .ok && $0.status != .killedByMemoryLimit }) { return .caseFailed }
        if checks.contains(where: { !$0.passed }) { return .finding }
        if policy.failOnMemoryLimit && cases.contains(where: { $0.status == .killedByMemoryLimit }) { return .finding }
        return .ok
    }
}
