import HarnessModel

/// One figure of one strategy against its baseline value: is the difference outside the noise?
///
/// The rule is the one comparison's (`RunToRun.compare`): a **regression** when the new median's whole 95% interval
/// (`MedianInterval`; the median alone with fewer than 6 repetitions) lies above the baseline's band,
/// old × (1 ± tolerance), and the change is beyond the floor; an **improvement** likewise below. The tolerance is the
/// noise the baseline measured (`FigureNoise.tolerance`, written by `baseline save`), unless `--tolerance` gives one
/// for every figure or the baseline has none (then 10%). Both runs' noise is thus allowed for: the baseline's in its
/// band, the new run's in its interval.
public struct BaselineComparison: Sendable, Hashable {
    public enum Verdict: String, Sendable, Hashable {
        case unchanged, regressed, improved
    }

    /// The baseline's value against the new median, judged.
    public var change: FigureChange
    /// The relative band around the baseline's value that counts as noise.
    public var tolerance: Double
    /// Where the band comes from: the baseline's measured noise, or nil for `--tolerance` (or its default).
    public var noise: FigureNoise?
    /// (max − min) / median of the new values, percent; nil with one value.
    public var spreadPercent: Double?

    /// Nil when `values` is empty (no completed case has the figure).
    public init?(old: Double, values: [Double], tolerance: Double?, noise: FigureNoise?, floorBytes: Double) {
        guard let new = Measured(values: values) else { return nil }
        self.noise = tolerance == nil ? noise : nil
        self.tolerance = tolerance ?? noise?.tolerance ?? BaselinePolicy.defaultTolerance
        change = RunToRun.compare(before: old, after: new, noise: .tolerance(self.tolerance, floor: floorBytes))
        spreadPercent = Statistics.spreadPercent(values)
    }

    /// The baseline's value.
    public var old: Double { change.before }
    /// The new median.
    public var new: Double { change.after.value }
    /// The new median's 95% interval, with 6 or more repetitions.
    public var interval: MedianInterval? { change.after.interval }
    public var floorBytes: Double { change.floor }

    public var verdict: Verdict {
        switch change.direction {
        case .unchanged: return .unchanged
        case .increased: return .regressed
        case .decreased: return .improved
        }
    }
}

/// A baseline check: a figure of a strategy against a baseline file.
public struct BaselineJudgement: Sendable, Hashable {
    public var figure: Figure
    public var comparison: BaselineComparison
    /// The file the baseline was read from, as the user named it.
    public var baselineFile: String
    /// An improvement outside the noise fails too (`--fail-on-improvement`).
    public var failOnImprovement: Bool

    public init(figure: Figure, comparison: BaselineComparison, baselineFile: String, failOnImprovement: Bool) {
        self.figure = figure
        self.comparison = comparison
        self.baselineFile = baselineFile
        self.failOnImprovement = failOnImprovement
    }

    /// False on a regression, and on an improvement with `failOnImprovement`.
    public var passed: Bool {
        !(comparison.verdict == .regressed || (comparison.verdict == .improved && failOnImprovement))
    }
}
