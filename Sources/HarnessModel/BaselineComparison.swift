/// One figure of one strategy against its baseline value: is the difference outside the noise?
///
/// The rule: a **regression** when the new median's whole 95% interval (`MedianInterval`; the median
/// alone with fewer than 6 repetitions) lies above the baseline's band, old × (1 ± tolerance), and the
/// change is beyond the floor; an **improvement** likewise below. The tolerance is the noise the baseline
/// measured (`FigureNoise.tolerance`, written by `baseline save`), unless `--tolerance` gives one for every
/// figure or the baseline has none (then 10%). Both runs' noise is thus allowed for: the baseline's in its
/// band, the new run's in its interval.
public struct BaselineComparison: Sendable, Hashable {
    public enum Verdict: String, Sendable, Hashable {
        case unchanged, regressed, improved
    }

    /// The baseline's value.
    public var old: Double
    /// The new median and, with 6 or more repetitions, its 95% interval.
    public var new: Double
    public var interval: MedianInterval?
    /// The relative band around `old` that counts as noise.
    public var tolerance: Double
    /// Where the band comes from: the baseline's measured noise, or nil for `--tolerance` (or its default).
    public var noise: FigureNoise?
    public var floorBytes: Double
    /// (max − min) / median of the new values, percent; nil with one value.
    public var spreadPercent: Double?

    /// Nil when `values` is empty (no completed case has the figure).
    public init?(old: Double, values: [Double], tolerance: Double?, noise: FigureNoise?, floorBytes: Double) {
        guard let median = Statistics.median(values) else { return nil }
        self.old = old
        new = median
        interval = MedianInterval(values)
        self.noise = tolerance == nil ? noise : nil
        self.tolerance = tolerance ?? noise?.tolerance ?? BaselinePolicy.defaultTolerance
        self.floorBytes = floorBytes
        spreadPercent = Statistics.spreadPercent(values)
    }

    /// New minus old, in the figure's unit.
    public var change: Double { new - old }
    /// The change relative to old (infinite when old is 0 and the figure moved).
    public var relativeChange: Double { old != 0 ? change / abs(old) : (change == 0 ? 0 : .infinity) }
    /// True when the change is beyond the absolute floor.
    public var beyondFloor: Bool { abs(change) > floorBytes }
    /// True when the new median's interval lies wholly outside old × (1 ± tolerance), on the side of the change.
    public var outsideNoise: Bool {
        let band = abs(old) * tolerance
        return change > 0 ? (interval?.lower ?? new) > old + band : (interval?.upper ?? new) < old - band
    }

    public var verdict: Verdict {
        guard beyondFloor && outsideNoise && change != 0 else { return .unchanged }
        return change > 0 ? .regressed : .improved
    }

    /// The check for the report: failed on a regression (and on an improvement with `failOnImprovement`).
    public func check(
        scenario: String, strategy: String, figure: Figure, baselineFile: String, failOnImprovement: Bool
    ) -> CheckResult {
        let verdict = verdict
        let passed = !(verdict == .regressed || (verdict == .improved && failOnImprovement))
        let floor = "floor \(Units.formatBytes(floorBytes))"
        return CheckResult(
            kind: .baseline, scenario: scenario, strategy: strategy, name: "\(strategy).\(figure) vs baseline",
            passed: passed, actual: figure.format(new),
            limit: "\(figure.format(old)) \(bandText)\(noise == nil ? "" : " noise") (\(floor))",
            margin: margin(figure, failOnImprovement: failOnImprovement),
            message: "\(scenario) / \(strategy).\(figure) \(verdict.rawValue): \(figure.format(old)) → "
                + "\(figure.format(new)), \(explanation(figure)); against \(baselineFile)",
            spreadPercent: spreadPercent)
    }

    /// How far inside (+) or outside (−) its band the figure the verdict reads lies, in percent of the band's edge,
    /// as a threshold's margin: the new median's interval's lower end (the median without one) against the upper
    /// edge, the larger of old × (1 + tolerance) and old + floor; with `failOnImprovement`, a figure that fell is
    /// held against the lower edge the same way.
    func margin(_ figure: Figure, failOnImprovement: Bool) -> String {
        let band = abs(old) * tolerance
        if failOnImprovement && change < 0 {
            let read = interval?.upper ?? new
            let lower = min(old - band, old - floorBytes)
            return ThresholdEvaluator.margin(
                read, limit: lower, comparison: .greaterOrEqual, formatted: figure.format(read))
        }
        let read = interval?.lower ?? new
        let upper = max(old + band, old + floorBytes)
        return ThresholdEvaluator.margin(read, limit: upper, comparison: .lessOrEqual, formatted: figure.format(read))
    }

    /// Why: `+7.9% (+3.2 MiB) above the baseline, outside its noise of ±2.1% (measured over 15 repetitions;
    /// the new median's 95% interval: +6.0% … +9.1%)`.
    func explanation(_ figure: Figure) -> String {
        let amount = "\(percent(relativeChange)) (\(change >= 0 ? "+" : "")\(figure.format(change)))"
        let side = change > 0 ? " above the baseline" : change < 0 ? " below the baseline" : ""
        if !beyondFloor { return "\(amount)\(side), within the floor of \(Units.formatBytes(floorBytes))" }
        let band = noise == nil ? "the tolerance of \(bandText)" : "its noise of \(bandText)"
        var details: [String] = []
        if let noise { details.append("measured over \(noise.repetitions) repetitions") }
        // Relative to a zero baseline the interval's ends say nothing.
        if let interval, old != 0 {
            details.append(
                "the new median's 95% interval: \(percent((interval.lower - old) / abs(old))) … "
                    + "\(percent((interval.upper - old) / abs(old)))")
        }
        let said = details.isEmpty ? "" : " (" + details.joined(separator: "; ") + ")"
        return "\(amount)\(side), \(outsideNoise ? "outside" : "within") \(band)\(said)"
    }

    /// The band as text: `±10%` for a flat tolerance, `±2.1%` for a derived one.
    var bandText: String {
        let percent = tolerance * 100
        return "±" + Units.fixed(percent, decimals: noise == nil && percent == percent.rounded() ? 0 : 1) + "%"
    }

    func percent(_ fraction: Double) -> String {
        guard fraction.isFinite else { return "new" }
        return (fraction >= 0 ? "+" : "") + Units.fixed(fraction * 100, decimals: 1) + "%"
    }
}
