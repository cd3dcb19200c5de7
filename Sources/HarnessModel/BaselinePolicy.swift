/// How a run is compared with a baseline.
public struct BaselinePolicy: Sendable, Hashable {
    /// Relative change tolerated for every figure (`--tolerance`), e.g. 0.10 for 10%; nil: each figure's
    /// tolerance derived from its noise when the baseline was saved, else `defaultTolerance`.
    public var tolerance: Double?
    /// Absolute change in bytes tolerated whatever the ratio, so tiny figures do not flap.
    public var floorBytes: Double
    /// Treat an improvement outside the noise and beyond the floor as a failure (off by default).
    public var failOnImprovement: Bool

    /// 10%: the tolerance of a figure the baseline keeps no noise for (a baseline saved before noise was kept).
    public static let defaultTolerance = 0.10

    public init(tolerance: Double? = nil, floorBytes: Double = 256 * 1024, failOnImprovement: Bool = false) {
        self.tolerance = tolerance
        self.floorBytes = floorBytes
        self.failOnImprovement = failOnImprovement
    }

    /// Compares every baseline figure of the strategies the run has (see `BaselineComparison` for the rule);
    /// cases absent from the run are skipped (shards, subsets).
    public func compare(_ report: RunReport, with baseline: Baseline, baselineFile: String) -> [CheckResult] {
        var checks: [CheckResult] = []
        for run in report.scenarios {
            for strategy in run.strategies {
                let key = "\(run.name)/\(strategy)"
                guard let base = baseline.cases[key] else { continue }
                for figure in Baseline.figures(of: run) {
                    let values = ThresholdEvaluator.values(FigureReference(strategy: strategy, figure: figure), in: run)
                    guard let old = base[figure.description],
                        let comparison = BaselineComparison(
                            old: old, values: values, tolerance: tolerance,
                            noise: baseline.derivedTolerance(key, figure), floorBytes: floorBytes)
                    else { continue }
                    checks.append(
                        comparison.check(
                            scenario: run.name, strategy: strategy, figure: figure, baselineFile: baselineFile,
                            failOnImprovement: failOnImprovement))
                }
            }
        }
        return checks
    }
}
