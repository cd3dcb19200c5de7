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
            let low = values.min(), let high = values.max()
        else { return nil }
        return (high - low) / abs(median) * 100
    }
}

/// The repetitions of one strategy in one scenario, reduced to medians (of completed cases only).
public struct StrategySummary: Sendable, Hashable {
    public var strategy: String
    /// Repetitions that completed; only these enter the medians.
    public var okCount: Int
    /// Repetitions that did not complete.
    public var failedCount: Int
    /// Median of the scenario's ranking figure (peak allocated unless the scenario says otherwise); nil
    /// when no completed repetition has it.
    public var rankingMedian: Double?
    /// Smallest and largest ranking figure over the completed repetitions.
    public var rankingMin: Double?
    public var rankingMax: Double?
    /// (max - min) / median of the ranking figure, percent; nil with one repetition.
    public var rankingSpreadPercent: Double?
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
    public var phasePeakNetBytes: [PhaseFigure]
    /// Median of each metric, in the order the first case lists them.
    public var metrics: [Metric]
    /// Median exact net peak (`--peak exact`), bytes; nil when no repetition has one.
    public var medianExactPeakNetBytes: Double?
    /// Median spike excess (exact net peak minus sampled net peak), bytes; nil when no repetition has one.
    public var medianSpikeExcessBytes: Double?
    /// Median exact net peak per phase, bytes, in phase order; empty when no repetition has exact peaks.
    public var phaseExactPeakNetBytes: [PhaseFigure] = []
    /// The 95% interval of the median net allocated peak; nil with fewer than 6 completed repetitions.
    public var peakAllocatedInterval: MedianInterval?
    /// The 95% interval of the median exact net peak; nil with fewer than 6 repetitions that have one.
    public var exactPeakInterval: MedianInterval?
    /// The 95% interval of the median ranking figure; nil with fewer than 6 repetitions that have it.
    public var rankingInterval: MedianInterval?
    /// The largest measurement floor (± of the net peak, see `MeasurementFloor`) of the repetitions, bytes;
    /// nil when none was measured.
    public var peakUncertaintyBytes: Int?
    /// The same for the exact peak; nil when sampled only or not measured.
    public var exactPeakUncertaintyBytes: Int?

    /// Reduces the completed repetitions `ok` (at least one) of a strategy that ran `caseCount` cases.
    init(strategy: String, ok: [CaseMeasurements], caseCount: Int, ranking: Figure) {
        func med(_ values: [Double]) -> Double { Statistics.median(values) ?? 0 }
        let net = ok.map { Double($0.peakAllocatedNetBytes) }
        let ranked = ok.compactMap { ranking.value(in: $0) }
        let phases = ok.first?.phases.map(\.name) ?? []
        self.strategy = strategy
        okCount = ok.count
        failedCount = caseCount - ok.count
        rankingMedian = Statistics.median(ranked)
        rankingMin = ranked.min()
        rankingMax = ranked.max()
        rankingSpreadPercent = Statistics.spreadPercent(ranked)
        rankingInterval = MedianInterval(ranked)
        medianPeakAllocatedNetBytes = med(net)
        minPeakAllocatedNetBytes = net.min() ?? 0
        maxPeakAllocatedNetBytes = net.max() ?? 0
        spreadPercent = Statistics.spreadPercent(net)
        peakAllocatedInterval = MedianInterval(net)
        exactPeakInterval = MedianInterval(ok.compactMap(\.exactPeakNetBytes).map(Double.init))
        medianPeakResidentBytes = med(ok.map { Double($0.peak.residentBytes) })
        medianPeakRSSBytes = med(ok.map { Double($0.peakRSSBytes) })
        medianResidueBytes = med(ok.compactMap { $0.residueBytes.map(Double.init) })
        medianDurationNanoseconds = med(ok.map { Double($0.durationNanoseconds) })
        phasePeakNetBytes = phases.map { phase in
            PhaseFigure(
                name: phase, bytes: med(ok.compactMap { Figure.phasePeakAllocated(phase).value(in: $0) }),
                uncertaintyBytes: ok.compactMap { m in
                    m.phases.first { $0.name == phase }.flatMap { m.floor?.uncertaintyBytes(of: $0) }
                }.max())
        }
        metrics = (ok.first?.metrics ?? []).map { first in
            Metric(name: first.name, value: med(ok.compactMap { $0.metric(first.name)?.value }), unit: first.unit)
        }
        medianExactPeakNetBytes = Statistics.median(ok.compactMap(\.exactPeakNetBytes).map(Double.init))
        medianSpikeExcessBytes = Statistics.median(ok.compactMap(\.spikeExcessBytes).map(Double.init))
        phaseExactPeakNetBytes = phases.compactMap { phase in
            let values = ok.compactMap { measurements in
                measurements.phases.first { $0.name == phase }.flatMap { measurements.exactPeakNetBytes(of: $0) }
            }
            return values.isEmpty
                ? nil
                : PhaseFigure(
                    name: phase, bytes: med(values.map(Double.init)),
                    uncertaintyBytes: ok.compactMap(\.exactPeakUncertaintyBytes).max())
        }
        peakUncertaintyBytes = ok.compactMap(\.peakUncertaintyBytes).max()
        exactPeakUncertaintyBytes = ok.compactMap(\.exactPeakUncertaintyBytes).max()
    }
}

/// A figure of one phase: its name, a value in bytes and its ± (the measurement floor), when known.
public struct PhaseFigure: Sendable, Hashable {
    public var name: String
    public var bytes: Double
    public var uncertaintyBytes: Int?
    public init(name: String, bytes: Double, uncertaintyBytes: Int? = nil) {
        self.name = name
        self.bytes = bytes
        self.uncertaintyBytes = uncertaintyBytes
    }
}

/// A scenario's strategies ranked by the median of its ranking figure, lowest first.
public struct ScenarioSummary: Sendable, Hashable {
    /// The figure the strategies are ranked by.
    public var ranking: Figure
    /// Strategies with at least one completed case, best (lowest median ranking figure) first.
    public var ranked: [StrategySummary]
    /// Strategies whose every case failed, in file order.
    public var failedStrategies: [String]
    /// The phase whose growth per second is given (`rate:`), and each strategy's growth in it (killed
    /// cases included), in file order; empty without a rate phase.
    public var ratePhase: String?
    public var growth: [StrategyGrowth]
    /// Strategies with cases the memory limit stopped, in file order.
    public var kills: [MemoryLimitKills]

    /// Summarizes `run`'s cases per strategy.
    public init(_ run: ScenarioRun) {
        ranking = run.ranking
        var summaries: [StrategySummary] = []
        var failed: [String] = []
        for strategy in run.strategies {
            let cases = run.cases.filter { $0.strategy == strategy }
            let ok = cases.compactMap(\.completed)
            if ok.isEmpty {
                failed.append(strategy)
            } else {
                summaries.append(
                    StrategySummary(strategy: strategy, ok: ok, caseCount: cases.count, ranking: run.ranking))
            }
        }
        // Stable order: by the median ranking figure (strategies without one last), then the file's order.
        let order = Dictionary(uniqueKeysWithValues: run.strategies.enumerated().map { ($1, $0) })
        ranked = summaries.sorted {
            ($0.rankingMedian ?? .infinity, order[$0.strategy] ?? 0) < (
                $1.rankingMedian ?? .infinity, order[$1.strategy] ?? 0
            )
        }
        failedStrategies = failed
        ratePhase = run.ratePhase
        growth = run.growthRates
        kills = run.memoryLimitKills
    }

    /// A strategy's growth in the rate phase; nil without one.
    public func growth(of strategy: String) -> StrategyGrowth? { growth.first { $0.strategy == strategy } }

    /// The fastest and slowest growth in the rate phase, when the fastest grows: a peak that grows with
    /// the phase's length depends on how long the scenario runs; the rate does not.
    public var rateReading: String? {
        guard let ratePhase, let fastest = growth.max(by: { $0.bytesPerSecond < $1.bytesPerSecond }),
            let slowest = growth.min(by: { $0.bytesPerSecond < $1.bytesPerSecond }), fastest.bytesPerSecond > 0
        else { return nil }
        let others =
            slowest.strategy == fastest.strategy ? "" : " (`\(slowest.strategy)`: \(slowest.formatted))"
        return "While `\(ratePhase)` runs, `\(fastest.strategy)` grows \(fastest.formatted)\(others), "
            + "a rate that does not depend on how long `\(ratePhase)` lasts, as a peak does."
    }

    /// A strategy's median ranking figure divided by the best strategy's; nil when the best is not positive.
    public func ratioToBest(_ summary: StrategySummary) -> Double? {
        guard let best = ranked.first?.rankingMedian, best > 0, let value = summary.rankingMedian else { return nil }
        return value / best
    }

    /// The ranking figure's unit, for formatting: a metric's own unit when the figure is a metric.
    public var rankingUnit: Metric.Unit? {
        guard case .metric(let name) = ranking else { return nil }
        return ranked.lazy.compactMap { $0.metrics.first { $0.name == name }?.unit }.first
    }

    /// A value of the ranking figure in words: `144.06 MiB`.
    public func formatRanking(_ value: Double) -> String { ranking.format(value, unit: rankingUnit) }

    /// The ranking figure as the report's tables and readings name it.
    public var rankingLabel: String { ranking.label }

    /// The ranking figure in a chart's title: `peak allocated`, `finalDatabaseBytes`.
    public var rankingTitle: String { String(ranking.label.filter { $0 != "`" }) }

    /// True when the ranking figure is a byte count (a byte figure, or a metric in bytes).
    public var rankingIsBytes: Bool {
        if case .metric = ranking { return rankingUnit == .bytes }
        return ranking.isBytes
    }

    /// What a chart's value axis measures: `allocated above baseline`, `finalDatabaseBytes (bytes)`.
    public var rankingAxisTitle: String {
        switch ranking {
        case .peakAllocated: return "allocated above baseline"
        case .exactPeak: return "live bytes above baseline, counted at every allocation"
        default: return rankingTitle
        }
    }

    /// The scenario in plain language: the strategies the memory limit stopped first (a kill is the strongest
    /// finding a budget gives, and a killed strategy has no peak to rank), then the comparison of the strategies
    /// that completed.
    public var reading: String {
        let spikes = missedSpike.map {
            " The sampler missed the peak of `\($0.strategy.strategy)`: "
                + "\(Units.formatBytes($0.strategy.medianPeakAllocatedNetBytes)) "
                + "sampled, \(Units.formatBytes($0.exactBytes)) counted at every allocation."
        }
        return readingWithoutSpikes + (spikes ?? "")
    }

    /// The strategy whose exact peak the sampler missed most, with that exact peak and the spike excess, bytes;
    /// nil when no excess is more than noise (64 KiB and 1% of the exact peak: thread caches in records without a
    /// floor, a loop's top between samples).
    public var missedSpike: (strategy: StrategySummary, exactBytes: Double, excessBytes: Double)? {
        ranked.compactMap { strategy -> (StrategySummary, Double, Double)? in
            guard let exact = strategy.medianExactPeakNetBytes, let excess = strategy.medianSpikeExcessBytes,
                excess > max(64 * 1024, exact * 0.01)
            else { return nil }
            return (strategy, exact, excess)
        }.max { $0.2 < $1.2 }
    }

    var readingWithoutSpikes: String {
        guard !kills.isEmpty else { return comparison }
        let each = kills.map {
            "`\($0.strategy)` (\($0.killedCount)/\($0.caseCount) cases, at "
                + "\(Units.fixed($0.medianKilledAtMilliseconds / 1000, decimals: 2)) s, "
                + "\(Units.formatBytes($0.medianFootprintBytes)))"
        }
        let list = each.count == 1 ? each[0] : each.dropLast().joined(separator: ", ") + " and " + each[each.count - 1]
        let killed = "Killed by the memory limit: \(list)."
        return ranked.isEmpty ? killed : killed + " Among the strategies that completed: " + comparison
    }

    /// One plain-language sentence comparing the worst and best strategies that completed by the ranking figure.
    public var comparison: String {
        guard let best = ranked.first, let worst = ranked.last else {
            return "No strategy completed, so there is nothing to compare."
        }
        guard let bestValue = best.rankingMedian else { return "No completed case has a value for \(ranking.label)." }
        let worstValue = worst.rankingMedian ?? bestValue
        let peak = ranking.isPeak
        // Net figures read "above baseline"; absolute ones (resident, RSS) and metrics stand alone.
        let net = ranking == .peakAllocated || ranking == .exactPeak ? " above baseline" : ""
        if ranked.count == 1 {
            return peak
                ? "`\(best.strategy)` peaks at \(formatRanking(bestValue))\(net)."
                : "`\(best.strategy)`: \(ranking.label) \(formatRanking(bestValue))."
        }
        guard let ratio = ratioToBest(worst) else {
            if peak && bestValue == 0 {
                return
                    "`\(best.strategy)` allocated nothing\(net); `\(worst.strategy)` peaks at "
                    + "\(formatRanking(worstValue))."
            }
            // No ratio to a best of zero: say how many strategies have none instead.
            let zero = ranked.filter { $0.rankingMedian == 0 }.count
            return bestValue == 0 && worstValue > 0
                ? "`\(worst.strategy)` has the most \(ranking.label) (\(formatRanking(worstValue))); "
                    + (zero == 1 ? "`\(best.strategy)` has none." : "\(zero) strategies have none.")
                : "`\(best.strategy)` has \(ranking.label) \(formatRanking(bestValue)); `\(worst.strategy)` "
                    + "\(formatRanking(worstValue))."
        }
        if ratio < 1.05 {
            let all = ranked.count == 2 ? "Both strategies" : "All \(ranked.count) strategies"
            let (low, high) = (formatRanking(bestValue), formatRanking(worstValue))
            let range = low == high ? low : "\(low) to \(high)"
            return peak
                ? "\(all) peak within 5% of each other (\(range)\(net))."
                : "\(all) are within 5% of each other on \(ranking.label) (\(range))."
        }
        let times = Units.fixed(ratio, decimals: 1)
        return peak
            ? "`\(worst.strategy)` peaks \(times)x higher than `\(best.strategy)` "
                + "(\(formatRanking(worstValue)) vs \(formatRanking(bestValue))\(net))."
            : "`\(worst.strategy)` has \(times)x the \(ranking.label) of `\(best.strategy)` "
                + "(\(formatRanking(worstValue)) vs \(formatRanking(bestValue)))."
    }
}
