/// Order statistics over plain values.
public enum Statistics {
    /// The median (mean of the two middle values for an even count); nil when empty.
    public static func median(_ values: [Double]) -> Double? {
        percentile(values, 50)
    }

    /// The `p`-th percentile (0...100) with linear interpolation between closest ranks; nil when empty.
    public static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        // Percentiles outside 0...100 are meaningless; clamp so a caller's rounding cannot index out of range.
        let rank = min(max(p, 0), 100) / 100 * Double(sorted.count - 1)
        let lower = Int(rank.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        let weight = rank - Double(lower)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * weight
    }

    /// Spread of repetitions as (max - min) / median, in percent; nil with fewer than two values or a zero median.
    public static func spreadPercent(_ values: [Double]) -> Double? {
        guard values.count >= 2, let median = median(values), median != 0,
              let low = values.min(), let high = values.max() else { return nil }
        return (high - low) / abs(median) * 100
    }
}

/// The repetitions of one strategy in one scenario, reduced to medians.
public struct StrategySummary: Sendable, Hashable {
    public var strategy: String
    /// Repetitions that ended `ok`; only these enter the medians.
    public var okCount: Int
    /// Repetitions that did not end `ok`.
    public var failedCount: Int
    /// Median of peak allocated above baseline, bytes.
    public var medianPeakAllocatedNetBytes: Double
    public var minPeakAllocatedNetBytes: Double
    public var maxPeakAllocatedNetBytes: Double
    /// (max - min) / median of the net allocated peak, percent; nil with one repetition.
    public var spreadPercent: Double?
    /// Median peak `stats.resident`, absolute bytes.
    public var medianPeakResidentBytes: Double
    /// Median `VmHWM`, bytes.
    public var medianPeakRSSBytes: Double
    /// Median residue after settle, bytes.
    public var medianResidueBytes: Double
    public var medianDurationNanoseconds: Double
    /// Median net allocated peak per phase (peak minus baseline), bytes, in phase order.
    public var phasePeakNetBytes: [(name: String, bytes: Double)]
    /// Median of each metric, in the order the first case lists them.
    public var metrics: [Metric]
    /// Median exact net peak (`--peak exact`), bytes; nil when no repetition has one.
    public var medianExactPeakNetBytes: Double?
    /// Median spike excess (exact net peak minus sampled net peak), bytes; nil when no repetition has one.
    public var medianSpikeExcessBytes: Double?
    /// Median exact net peak per phase, bytes, in phase order; empty when no repetition has exact peaks.
    public var phaseExactPeakNetBytes: [(name: String, bytes: Double)] = []

    public static func == (lhs: StrategySummary, rhs: StrategySummary) -> Bool {
        lhs.strategy == rhs.strategy && lhs.okCount == rhs.okCount && lhs.failedCount == rhs.failedCount
            && lhs.medianPeakAllocatedNetBytes == rhs.medianPeakAllocatedNetBytes
            && lhs.metrics == rhs.metrics
            && lhs.phasePeakNetBytes.map(\.name) == rhs.phasePeakNetBytes.map(\.name)
            && lhs.phasePeakNetBytes.map(\.bytes) == rhs.phasePeakNetBytes.map(\.bytes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(strategy)
        hasher.combine(medianPeakAllocatedNetBytes)
    }
}

/// A scenario's strategies ranked by median net peak allocated, lowest first.
public struct ScenarioSummary: Sendable, Hashable {
    /// Strategies with at least one `ok` case, best (lowest median peak) first.
    public var ranked: [StrategySummary]
    /// Strategies whose every case failed, in file order.
    public var failedStrategies: [String]

    /// Summarizes `run`'s cases per strategy.
    public init(_ run: ScenarioRun) {
        var summaries: [StrategySummary] = []
        var failed: [String] = []
        for strategy in run.strategies {
            let cases = run.cases.filter { $0.strategy == strategy }
            let ok = cases.filter { $0.status == .ok }
            guard !ok.isEmpty else {
                failed.append(strategy)
                continue
            }
            let net = ok.map { Double($0.peakAllocatedNetBytes) }
            func med(_ values: [Double]) -> Double { Statistics.median(values) ?? 0 }
            var phasePeaks: [(String, Double)] = []
            for phase in ok[0].phases.map(\.name) {
                let values = ok.compactMap { result in
                    result.phases.first { $0.name == phase }.map { Double($0.peakAllocatedBytes - result.baselineAllocatedBytes) }
                }
                phasePeaks.append((phase, med(values)))
            }
            let metrics = ok[0].metrics.map { first in
                Metric(name: first.name, value: med(ok.compactMap { $0.metric(first.name)?.value }), unit: first.unit)
            }
            let exactNet = ok.compactMap(\.exactPeakNetBytes).map(Double.init)
            let excess = ok.compactMap(\.spikeExcessBytes).map(Double.init)
            var phaseExact: [(String, Double)] = []
            for phase in ok[0].phases.map(\.name) {
                let values = ok.compactMap { result in
                    result.phases.first { $0.name == phase }.flatMap { result.exactPeakNetBytes(of: $0) }.map(Double.init)
                }
                if !values.isEmpty { phaseExact.append((phase, med(values))) }
            }
            summaries.append(StrategySummary(
                strategy: strategy, okCount: ok.count, failedCount: cases.count - ok.count,
                medianPeakAllocatedNetBytes: med(net), minPeakAllocatedNetBytes: net.min() ?? 0,
                maxPeakAllocatedNetBytes: net.max() ?? 0, spreadPercent: Statistics.spreadPercent(net),
                medianPeakResidentBytes: med(ok.map { Double($0.peak.residentBytes) }),
                medianPeakRSSBytes: med(ok.map { Double($0.peakRSSBytes) }),
                medianResidueBytes: med(ok.map { Double($0.residueBytes) }),
                medianDurationNanoseconds: med(ok.map { Double($0.durationNanoseconds) }),
                phasePeakNetBytes: phasePeaks, metrics: metrics,
                medianExactPeakNetBytes: Statistics.median(exactNet), medianSpikeExcessBytes: Statistics.median(excess),
                phaseExactPeakNetBytes: phaseExact
            ))
        }
        // Stable order: by median peak, then by the file's order for ties.
        let order = Dictionary(uniqueKeysWithValues: run.strategies.enumerated().map { ($1, $0) })
        ranked = summaries.sorted {
            ($0.medianPeakAllocatedNetBytes, order[$0.strategy] ?? 0) < ($1.medianPeakAllocatedNetBytes, order[$1.strategy] ?? 0)
        }
        failedStrategies = failed
    }

    /// Median net peak of a strategy divided by the best strategy's; nil when the best is not positive.
    public func ratioToBest(_ summary: StrategySummary) -> Double? {
        guard let best = ranked.first, best.medianPeakAllocatedNetBytes > 0 else { return nil }
        return summary.medianPeakAllocatedNetBytes / best.medianPeakAllocatedNetBytes
    }

    /// One plain-language sentence comparing the worst and best strategies.
    public var reading: String {
        guard let best = ranked.first, let worst = ranked.last else {
            return "No strategy completed, so there is nothing to compare."
        }
        if ranked.count == 1 {
            return "`\(best.strategy)` peaks at \(Units.formatBytes(best.medianPeakAllocatedNetBytes)) above baseline."
        }
        guard let ratio = ratioToBest(worst) else {
            return "`\(best.strategy)` allocated nothing above baseline; `\(worst.strategy)` peaks at \(Units.formatBytes(worst.medianPeakAllocatedNetBytes))."
        }
        if ratio < 1.05 {
            return "All strategies peak within 5% of each other (\(Units.formatBytes(best.medianPeakAllocatedNetBytes)) above baseline)."
        }
        return "`\(worst.strategy)` peaks \(Units.fixed(ratio, decimals: 1))x higher than `\(best.strategy)` "
            + "(\(Units.formatBytes(worst.medianPeakAllocatedNetBytes)) vs \(Units.formatBytes(best.medianPeakAllocatedNetBytes)) above baseline)."
    }
}
