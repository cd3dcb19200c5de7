import HarnessModel

/// What the renderings of a run record rely on beyond its types, checked when `run.json` is read:
/// a record written by this version passes; a damaged or hand-edited one is refused with the place
/// of the first problem instead of reaching a renderer that would trap on it.
public enum RecordCheck {
    /// The largest magnitude of any number in `run.json` and baselines: 2^53. No figure memharness
    /// writes comes near it (8 PiB, or 104 days in nanoseconds), every integer up to it is exact as a
    /// Double, and sums and differences of figures stay far from overflowing.
    public static let numberMagnitudeLimit = 9_007_199_254_740_992.0

    /// A coding key of a path into the record.
    public struct Key: CodingKey, Sendable {
        public var stringValue: String
        public var intValue: Int?
        public init(_ name: String) {
            stringValue = name
            intValue = nil
        }
        public init(_ index: Int) {
            stringValue = "Index \(index)"
            intValue = index
        }
        public init?(stringValue: String) { self.init(stringValue) }
        public init?(intValue: Int) { self.init(intValue) }
    }

    /// A problem and where it is in the record (a coding path, as the decoder's errors give).
    public struct Problem: Sendable {
        public var path: [Key]
        public var message: String
    }

    /// The first problem of `record`, if any.
    public static func firstProblem(in record: RunRecord) -> Problem? {
        if record.rendering.samplesMaxRows < 0 {
            return Problem(
                path: [Key("rendering"), Key("samplesMaxRows")],
                message: "samplesMaxRows is \(record.rendering.samplesMaxRows); expected 0 (keep all) or more")
        }
        for (s, scenario) in record.report.scenarios.enumerated() {
            if let problem = firstProblem(in: scenario, at: [Key("report"), Key("scenarios"), Key(s)]) {
                return problem
            }
        }
        for (w, sweep) in (record.report.sweeps ?? []).enumerated() {
            if let problem = firstProblem(in: sweep, at: [Key("report"), Key("sweeps"), Key(w)]) { return problem }
        }
        return nil
    }

    /// The first problem of one scenario: its repetitions, its cases' figures, its thresholds' limits.
    static func firstProblem(in scenario: ScenarioRun, at scenarioPath: [Key]) -> Problem? {
        if scenario.repetitions < 0 {
            return Problem(
                path: scenarioPath + [Key("repetitions")],
                message: "repetitions is \(scenario.repetitions); expected 0 or more")
        }
        for (c, result) in scenario.cases.enumerated() {
            let casePath = scenarioPath + [Key("cases"), Key(c)]
            if result.repetition < 1 {
                return Problem(
                    path: casePath + [Key("repetition")],
                    message: "repetition is \(result.repetition); repetitions count from 1")
            }
            if let m = result.measurements, let negative = negativeFigure(m) {
                return Problem(
                    path: casePath,
                    message: "\(Excerpt.of(result.label)): \(negative) is negative; it is a size or a time")
            }
        }
        for (t, threshold) in scenario.thresholds.enumerated() {
            let limit: Double
            switch threshold.limit {
            case .absolute(let value): limit = value
            case .relative(let factor, _): limit = factor
            }
            // The scenario parser refuses these; only a damaged record has them.
            if !limit.isFinite {
                return Problem(
                    path: scenarioPath + [Key("thresholds"), Key(t), Key("limit")],
                    message:
                        "the limit of threshold '\(Excerpt.of(threshold.text))' is \(limit); expected a finite number")
            }
        }
        return nil
    }

    /// The first point or fitted line of a sweep that is not finite.
    static func firstProblem(in sweep: SweepSummary, at sweepPath: [Key]) -> Problem? {
        for (s, series) in sweep.series.enumerated() {
            let seriesPath = sweepPath + [Key("series"), Key(s)]
            for (p, point) in series.points.enumerated()
            where !point.x.isFinite || !(point.medianPeakAllocatedNetBytes?.isFinite ?? true) {
                return Problem(
                    path: seriesPath + [Key("points"), Key(p)],
                    message: "sweep point '\(Excerpt.of(point.label))' of \(Excerpt.of(series.strategy)) is not finite")
            }
            if let fit = series.fit,
                !fit.slope.isFinite || !fit.intercept.isFinite || !(fit.rSquared?.isFinite ?? true)
            {
                return Problem(
                    path: seriesPath + [Key("fit")],
                    message: "the sweep's fitted line of \(Excerpt.of(series.strategy)) is not finite")
            }
        }
        return nil
    }

    /// The name of an absolute figure of `m` that is below zero (net figures such as the residue may be).
    static func negativeFigure(_ m: CaseMeasurements) -> String? {
        let figures: [(String, Int64)] = [
            ("baselineAllocatedBytes", Int64(m.baselineAllocatedBytes)),
            ("peak.allocatedBytes", Int64(m.peak.allocatedBytes)),
            ("peak.activeBytes", Int64(m.peak.activeBytes)), ("peak.residentBytes", Int64(m.peak.residentBytes)),
            ("peak.mappedBytes", Int64(m.peak.mappedBytes)), ("peak.retainedBytes", Int64(m.peak.retainedBytes)),
            ("peak.metadataBytes", Int64(m.peak.metadataBytes)), ("peakRSSBytes", Int64(m.peakRSSBytes)),
            ("durationNanoseconds", m.durationNanoseconds), ("sampling.sampleCount", Int64(m.sampling.sampleCount)),
        ]
        return figures.first { $0.1 < 0 }?.0
    }
}
