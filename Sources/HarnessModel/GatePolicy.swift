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
}
