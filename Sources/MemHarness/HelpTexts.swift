import HarnessModel
import Verdicts

// The `--help` texts that explain the model's rules: the exit statuses, how a baseline comparison fails,
// how a baseline's tolerances are derived. The model holds the rules; the command line words them.

extension ExitStatus {
    /// Every status with its code as `--help`, the README and the DocC articles give it, in code order.
    static let documented: [(status: ExitStatus, code: String, meaning: String)] = [
        (.ok, "0", "every case completed and every check passed"),
        (.caseFailed, "1", "a case crashed, failed, timed out or could not be measured"),
        (.finding, "2", "a finding (a threshold breached, a regression against the baseline, an unexpected leak)"),
        (.usage, "64", "usage or data error, before any work"),
        (.ioError, "74", "a file could not be read or written (the previous report is intact)"),
        (.locked, "75", "another run holds the output folder"),
        (.interrupted(signal: 0), "128+N", "stopped by signal N (SIGHUP 129, SIGINT 130, SIGTERM 143)"),
    ]

    /// Every status in one paragraph, for `memharness --help`.
    static var summary: String {
        "Exit status: " + documented.map { "\($0.code) \($0.meaning)" }.joined(separator: "; ") + "."
    }
}

extension BaselinePolicy {
    /// When a comparison with a baseline fails, in the words of `memharness compare --help`.
    static let explanation =
        "Fails (exit 2) only on regressions outside the noise and beyond --floor: the new median's 95% interval "
        + "(with 6 or more repetitions; else the median) must lie wholly above the baseline's band, the baseline "
        + "value ± its tolerance (derived from its noise by `baseline save`, or --tolerance). Improvements are "
        + "reported and fail only with --fail-on-improvement."
}

extension ToleranceDerivation {
    /// What a baseline file holds and how each figure's tolerance is derived, in the words of
    /// `memharness baseline save --help`.
    static let explanation =
        "The file holds bytes per figure per scenario/strategy, sorted, with no times, hosts or paths, so it diffs "
        + "well and is the same on any machine of a kind. With each figure goes its noise, measured over the run's "
        + "repetitions (the reach of the median's 95% interval with 6 or more, else half their range), and the "
        + "tolerance derived from it: max(--noise-factor × noise, --min-tolerance). `compare` and `run --baseline` "
        + "hold each figure to its own tolerance unless --tolerance is given."
}
