import HarnessModel

/// How `baseline save` turns a figure's measured noise into its tolerance: max(`factor` × noise, `minimum`); the
/// repetitions' part of the one noise model (`NoiseBand`).
///
/// The noise is the reach of the 95% interval of the median relative to it (6 or more repetitions), or
/// half the range of the values (2 to 5). A comparison sets the new median's own interval against this
/// tolerance, so the factor only has to cover what one run's interval does not see: drift between runs.
public struct ToleranceDerivation: Sendable, Hashable {
    /// Multiplies the measured noise.
    public var factor: Double
    /// The smallest tolerance derived, whatever the noise: a figure that did not move at all over a few
    /// repetitions can still move a little between runs.
    public var minimum: Double

    /// 2: twice the baseline's own noise.
    public static let defaultFactor = 2.0
    /// 1%: peaks of unchanged code stayed within it in the stability benchmark (Reports/benchmarks/stability.md).
    public static let defaultMinimum = 0.01

    public init(
        factor: Double = ToleranceDerivation.defaultFactor, minimum: Double = ToleranceDerivation.defaultMinimum
    ) {
        self.factor = factor
        self.minimum = minimum
    }

    /// The noise of `values` and its tolerance; nil with fewer than 2 values, a value that is not finite, or
    /// a zero median with values around it (no relative noise to state): the comparison then falls back to
    /// `--tolerance`.
    public func noise(of values: [Double]) -> FigureNoise? {
        guard values.count >= 2, values.allSatisfy(\.isFinite), let median = Statistics.median(values),
            let low = values.min(), let high = values.max()
        else { return nil }
        let interval = MedianInterval(values)
        let relative: Double
        if let interval {
            relative = interval.relativeReach
        } else {
            relative = high == low ? 0 : median == 0 ? .infinity : (high - low) / 2 / abs(median)
        }
        guard relative.isFinite else { return nil }
        return FigureNoise(
            repetitions: values.count, method: interval == nil ? .halfRange : .interval95, relativeNoise: relative,
            intervalLow: interval?.lower, intervalHigh: interval?.upper, tolerance: max(factor * relative, minimum))
    }
}

extension Baseline {
    /// The medians of every strategy that has an `ok` case and, with `derivation`, each figure's noise
    /// and the tolerance derived from it (for figures measured at least twice).
    public init(name: String, report: RunReport, derivation: ToleranceDerivation? = nil) {
        var cases: [String: [String: Double]] = [:]
        var noise: [String: [String: FigureNoise]] = [:]
        for run in report.scenarios {
            for strategy in run.strategies {
                var figures: [String: Double] = [:]
                var noises: [String: FigureNoise] = [:]
                for figure in Self.figures(of: run) {
                    let values = ThresholdEvaluator.values(FigureReference(strategy: strategy, figure: figure), in: run)
                    guard let median = Statistics.median(values) else { continue }
                    figures[figure.description] = median.rounded()
                    noises[figure.description] = derivation?.noise(of: values)
                }
                if !figures.isEmpty { cases["\(run.name)/\(strategy)"] = figures }
                if !noises.isEmpty { noise["\(run.name)/\(strategy)"] = noises }
            }
        }
        self.init(name: name, cases: cases, noise: derivation == nil ? nil : noise)
    }

}
