/// The medians of a run, per case (scenario/strategy) and figure: small, sorted, machine-independent
/// (no times, hosts or paths), meant to be committed and compared against in CI.
public struct Baseline: Sendable, Hashable, Codable {
    /// The file format, for readers: `memharness-baseline/1`.
    public var format = Baseline.formatName
    public var name: String
    /// `"scenario/strategy"` → figure name (as in thresholds) → median bytes.
    public var cases: [String: [String: Double]]
    /// `"scenario/strategy"` → figure name → how noisy the figure was when the baseline was saved and the
    /// tolerance derived from it; nil in baselines saved without (every baseline before noise was kept).
    public var noise: [String: [String: FigureNoise]]?

    public static let formatName = "memharness-baseline/1"

    public init(name: String, cases: [String: [String: Double]], noise: [String: [String: FigureNoise]]? = nil) {
        self.name = name
        self.cases = cases
        self.noise = noise
    }

    /// The figures a baseline keeps: the steady ones.
    ///
    /// Measured over 10 consecutive runs of the shipped scenarios on a 2-core machine: peak allocated
    /// stays within a few percent, while peak resident and RSS move by up to ~12% on workloads that
    /// churn memory (freed pages stay resident until jemalloc's decay returns them), and residue and
    /// late-phase peaks by up to ~0.7 MiB (blocks cached by worker threads). A scenario measured with
    /// `--peak exact` keeps the exact peak instead: its sampled peak depends on whether a sample
    /// happens to land on a spike. Gate the noisier figures with thresholds and a wide margin instead.
    public static func figures(of run: ScenarioRun) -> [Figure] {
        let exact = run.cases.contains { $0.completed?.exact != nil }
        return exact ? [.exactPeak] : [.peakAllocated]
    }

    /// The tolerance the baseline derived for a figure of a case; nil when it has none.
    public func derivedTolerance(_ key: String, _ figure: Figure) -> FigureNoise? {
        noise?[key]?[figure.description]
    }
}

/// How noisy a figure was over the repetitions of the run a baseline was saved from.
public struct FigureNoise: Sendable, Hashable, Codable {
    /// How the noise was measured.
    public enum Method: String, Sendable, Hashable, Codable {
        /// The reach of the median's 95% interval (`MedianInterval`), with 6 or more repetitions.
        case interval95 = "interval95"
        /// Half the range of the values (max − min) / 2, with 2 to 5 repetitions (too few for an interval).
        case halfRange = "half-range"
    }

    /// Completed repetitions the figure was measured over.
    public var repetitions: Int
    public var method: Method
    /// The noise relative to the median, as a fraction (0.021 for ±2.1%).
    public var relativeNoise: Double
    /// The ends of the median's 95% interval, bytes; nil when measured by half range.
    public var intervalLow: Double?
    public var intervalHigh: Double?
    /// The relative change a comparison tolerates: max(factor × `relativeNoise`, the derivation's minimum).
    public var tolerance: Double

    public init(
        repetitions: Int, method: Method, relativeNoise: Double, intervalLow: Double? = nil,
        intervalHigh: Double? = nil, tolerance: Double
    ) {
        self.repetitions = repetitions
        self.method = method
        self.relativeNoise = relativeNoise
        self.intervalLow = intervalLow
        self.intervalHigh = intervalHigh
        self.tolerance = tolerance
    }
}
