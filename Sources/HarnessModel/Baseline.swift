/// The medians of a run, per case (scenario/strategy) and figure: small, sorted, machine-independent
/// (no times, hosts or paths), meant to be committed and compared against in CI.
public struct Baseline: Sendable, Hashable, Codable {
    /// The file format, for readers: `memharness-baseline/1`.
    public var format = Baseline.formatName
    public var name: String
    /// `"scenario/strategy"` → figure name (as in thresholds) → median bytes.
    public var cases: [String: [String: Double]]

    public static let formatName = "memharness-baseline/1"

    public init(name: String, cases: [String: [String: Double]]) {
        self.name = name
        self.cases = cases
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

    /// The medians of every strategy that has an `ok` case.
    public init(name: String, report: RunReport) {
        var cases: [String: [String: Double]] = [:]
        for run in report.scenarios {
            for strategy in run.strategies {
                var figures: [String: Double] = [:]
                for figure in Self.figures(of: run) {
                    if let median = ThresholdEvaluator.median(
                        FigureReference(strategy: strategy, figure: figure), in: run)?.median
                    {
                        figures[figure.description] = median.rounded()
                    }
                }
                if !figures.isEmpty { cases["\(run.name)/\(strategy)"] = figures }
            }
        }
        self.init(name: name, cases: cases)
    }
}

/// How a run is compared with a baseline.
public struct BaselinePolicy: Sendable, Hashable {
    /// Relative change tolerated, e.g. 0.10 for 10%.
    public var tolerance: Double
    /// Absolute change in bytes tolerated whatever the ratio, so tiny figures do not flap.
    public var floorBytes: Double
    /// Treat an improvement beyond both bounds as a failure (off by default).
    public var failOnImprovement: Bool

    public init(tolerance: Double = 0.10, floorBytes: Double = 256 * 1024, failOnImprovement: Bool = false) {
        self.tolerance = tolerance
        self.floorBytes = floorBytes
        self.failOnImprovement = failOnImprovement
    }

    /// Compares every baseline figure of the strategies the run has. A regression fails only when it is
    /// beyond both the tolerance and the floor; cases absent from the run are skipped (shards, subsets).
    public func compare(_ report: RunReport, with baseline: Baseline, baselineFile: String) -> [CheckResult] {
        var checks: [CheckResult] = []
        for run in report.scenarios {
            for strategy in run.strategies {
                guard let base = baseline.cases["\(run.name)/\(strategy)"] else { continue }
                for figure in Baseline.figures(of: run) {
                    guard let old = base[figure.description],
                        let new = ThresholdEvaluator.median(
                            FigureReference(strategy: strategy, figure: figure), in: run)
                    else { continue }
                    let change = new.median - old
                    let relative = old != 0 ? change / abs(old) : (change == 0 ? 0 : .infinity)
                    let beyond = abs(change) > floorBytes && abs(relative) > tolerance
                    let regression = beyond && change > 0
                    let improvement = beyond && change < 0
                    let passed = !(regression || (improvement && failOnImprovement))
                    let percent =
                        relative.isFinite
                        ? (relative >= 0 ? "+" : "") + Units.fixed(relative * 100, decimals: 1) + "%" : "new"
                    let what = regression ? "regressed" : improvement ? "improved" : "unchanged"
                    checks.append(
                        CheckResult(
                            kind: .baseline, scenario: run.name, strategy: strategy,
                            name: "\(strategy).\(figure) vs baseline",
                            passed: passed, actual: figure.format(new.median),
                            limit:
                                "\(figure.format(old)) ±\(Units.fixed(tolerance * 100, decimals: 0))% (floor \(Units.formatBytes(floorBytes)))",
                            margin: percent,
                            message:
                                "\(run.name) / \(strategy).\(figure) \(what): \(figure.format(old)) → \(figure.format(new.median)) (\(percent), "
                                + "\(change >= 0 ? "+" : "")\(figure.format(change))) against \(baselineFile)",
                            spreadPercent: new.spread
                        ))
                }
            }
        }
        return checks
    }
}
