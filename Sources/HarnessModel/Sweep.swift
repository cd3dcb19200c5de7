/// A straight line fitted by least squares: `y = intercept + slope * x`.
public struct LinearFit: Sendable, Hashable, Codable {
    /// Change of y per unit of x (bytes per second when x is seconds and y is bytes).
    public var slope: Double
    /// y at x = 0.
    public var intercept: Double
    /// Share of y's variance the line explains, 0...1; nil when y does not vary (a flat line fits exactly).
    public var rSquared: Double?

    public init(slope: Double, intercept: Double, rSquared: Double?) {
        self.slope = slope
        self.intercept = intercept
        self.rSquared = rSquared
    }

    /// The least-squares line through `points`; nil with fewer than two distinct x values.
    public static func leastSquares(_ points: [(x: Double, y: Double)]) -> LinearFit? {
        guard points.count >= 2 else { return nil }
        let count = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / count
        let meanY = points.reduce(0) { $0 + $1.y } / count
        var sxx = 0.0
        var sxy = 0.0
        var syy = 0.0
        for point in points {
            let dx = point.x - meanX
            let dy = point.y - meanY
            sxx += dx * dx
            sxy += dx * dy
            syy += dy * dy
        }
        guard sxx > 0 else { return nil }
        let slope = sxy / sxx
        let intercept = meanY - slope * meanX
        guard syy > 0 else { return LinearFit(slope: slope, intercept: intercept, rSquared: nil) }
        // Rounding can push the ratio a hair outside 0...1 for near-perfect or near-flat fits.
        let rSquared = min(max(sxy * sxy / (sxx * syy), 0), 1)
        return LinearFit(slope: slope, intercept: intercept, rSquared: rSquared)
    }

    /// The half-width of the 95% confidence interval of this line's slope through `points` (the points it was fitted
    /// to): Student's t with n − 2 degrees of freedom times the slope's standard error. nil with fewer than three
    /// points: two always lie on a line, so no spread is left to bound the slope with.
    public func slopeBound95(of points: [(x: Double, y: Double)]) -> Double? {
        guard points.count >= 3 else { return nil }
        let meanX = points.reduce(0) { $0 + $1.x } / Double(points.count)
        var sxx = 0.0
        var squaredResiduals = 0.0
        for point in points {
            sxx += (point.x - meanX) * (point.x - meanX)
            let residual = point.y - value(at: point.x)
            squaredResiduals += residual * residual
        }
        let degreesOfFreedom = points.count - 2
        let standardError = (squaredResiduals / Double(degreesOfFreedom) / sxx).squareRoot()
        return LeakAnalysis.studentT975(degreesOfFreedom: degreesOfFreedom) * standardError
    }

    /// The fitted y at `x`.
    public func value(at x: Double) -> Double { intercept + slope * x }
}

/// One point of a sweep for one strategy.
public struct SweepPoint: Sendable, Hashable, Codable {
    /// The value as written on the command line: `2s`.
    public var label: String
    /// The value in the sweep's `xUnit` (seconds for durations, so slopes read per second).
    public var x: Double
    /// Median over repetitions of peak allocated above baseline, bytes; nil when no repetition ended ok.
    public var medianPeakAllocatedNetBytes: Double?

    public init(label: String, x: Double, medianPeakAllocatedNetBytes: Double?) {
        self.label = label
        self.x = x
        self.medianPeakAllocatedNetBytes = medianPeakAllocatedNetBytes
    }
}

/// One strategy across every point of a sweep.
public struct SweepSeries: Sendable, Hashable, Codable {
    public var strategy: String
    /// The points in the order swept.
    public var points: [SweepPoint]
    /// The line through the points that have a peak: bytes per `xUnit`; nil with fewer than two such points.
    public var fit: LinearFit?

    public init(strategy: String, points: [SweepPoint], fit: LinearFit?) {
        self.strategy = strategy
        self.points = points
        self.fit = fit
    }
}

/// Peak versus swept value, per strategy, with the growth slope.
public struct SweepSummary: Sendable, Hashable, Codable {
    /// The scenario swept.
    public var scenario: String
    /// What was swept: `burst.duration`.
    public var key: String
    /// Unit of the points' x and of the slope's denominator: `s`, `B`, `/s`, `share` or `count`.
    public var xUnit: String
    /// One series per strategy, in the scenario's strategy order.
    public var series: [SweepSeries]

    public init(scenario: String, key: String, xUnit: String, series: [SweepSeries]) {
        self.scenario = scenario
        self.key = key
        self.xUnit = xUnit
        self.series = series
    }

    /// Summarizes the runs of one scenario, one per point: `points[i]` is the value swept (its label
    /// and its value) and the `ScenarioRun` measured at it. Strategies are taken from the first run.
    public init(scenario: String, key: String, points: [(label: String, value: ParameterValue, run: ScenarioRun)]) {
        let unit = points.first.map { Self.unit(of: $0.value) } ?? (name: "count", divisor: 1)
        let summaries = points.map { ScenarioSummary($0.run) }
        let strategies = points.first?.run.strategies ?? []
        series = strategies.map { strategy in
            let swept = zip(points, summaries).map { point, summary in
                SweepPoint(
                    label: point.label, x: (point.value.baseUnitValue ?? 0) / unit.divisor,
                    medianPeakAllocatedNetBytes: summary.ranked.first { $0.strategy == strategy }?
                        .medianPeakAllocatedNetBytes)
            }
            let measured = swept.compactMap { point in point.medianPeakAllocatedNetBytes.map { (x: point.x, y: $0) } }
            return SweepSeries(strategy: strategy, points: swept, fit: LinearFit.leastSquares(measured))
        }
        self.scenario = scenario
        self.key = key
        xUnit = unit.name
    }

    /// The unit a value is fitted in, and what divides its base unit into it.
    private static func unit(of value: ParameterValue) -> (name: String, divisor: Double) {
        switch value {
        case .duration: return ("s", 1_000_000_000)  // base unit is nanoseconds
        case .bytes: return ("B", 1)
        case .rate: return ("/s", 1)
        case .fraction: return ("share", 1)
        case .count, .flag, .choice: return ("count", 1)
        }
    }
}
