extension BaselinePolicy {
    /// When a comparison with a baseline fails, in the words of `memharness compare --help`.
    public static let explanation =
        "Fails (exit 2) only on regressions outside the noise and beyond --floor: the new median's 95% interval "
        + "(with 6 or more repetitions; else the median) must lie wholly above the baseline's band, the baseline "
        + "value ± its tolerance (derived from its noise by `baseline save`, or --tolerance). Improvements are "
        + "reported and fail only with --fail-on-improvement."
}

extension ToleranceDerivation {
    /// What a baseline file holds and how each figure's tolerance is derived, in the words of
    /// `memharness baseline save --help`.
    public static let explanation =
        "The file holds bytes per figure per scenario/strategy, sorted, with no times, hosts or paths, so it diffs "
        + "well and is the same on any machine of a kind. With each figure goes its noise, measured over the run's "
        + "repetitions (the reach of the median's 95% interval with 6 or more, else half their range), and the "
        + "tolerance derived from it: max(--noise-factor × noise, --min-tolerance). `compare` and `run --baseline` "
        + "hold each figure to its own tolerance unless --tolerance is given."
}
