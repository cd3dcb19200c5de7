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

/// The exit statuses of every memharness command, as the README and `--help` document them.
public enum ExitStatus: Sendable, Hashable, CustomStringConvertible {
    /// Every case completed and every check passed.
    case ok
    /// A case crashed, failed, timed out or could not be measured.
    case caseFailed
    /// A finding: a threshold breached, a regression against the baseline, an unexpected leak.
    case finding
    /// Bad usage or bad input data (an option, a scenario, a baseline, a report folder), before any work.
    case usage
    /// Reading or writing a file failed (a full disk, an I/O error); the previous report is intact.
    case ioError
    /// Another run holds the output folder.
    case locked
    /// Stopped by a signal (SIGINT, SIGTERM, SIGHUP): 128 + the signal's number, as shells report it.
    case interrupted(signal: Int32)

    /// The process exit code.
    public var code: Int32 {
        switch self {
        case .ok: return 0
        case .caseFailed: return 1
        case .finding: return 2
        case .usage: return 64
        case .ioError: return 74
        case .locked: return 75
        case .interrupted(let signal): return 128 + signal
        }
    }

    public var description: String {
        switch self {
        case .ok: return "every case completed and every check passed"
        case .caseFailed: return "a case crashed, failed, timed out or could not be measured"
        case .finding: return "a threshold breached, a regression against the baseline, or an unexpected leak"
        case .usage: return "usage or data error, before any work"
        case .ioError: return "a file could not be read or written; the previous report is intact"
        case .locked: return "another run holds the output folder"
        case .interrupted: return "stopped by SIGINT, SIGTERM or SIGHUP (128 + the signal's number)"
        }
    }

    /// Every status in one paragraph, for `--help`.
    public static let summary =
        "Exit status: 0 every case completed and every check passed; 1 a case crashed, failed, timed out or could "
        + "not be measured; 2 a finding (a threshold breached, a regression against the baseline, an unexpected "
        + "leak); 64 usage or data error, before any work; 74 a file could not be read or written (the previous "
        + "report is intact); 75 another run holds the output folder; 128+N stopped by signal N (SIGHUP 129, "
        + "SIGINT 130, SIGTERM 143)."
}
