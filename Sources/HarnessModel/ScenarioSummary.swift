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
    /// The ranking figure's unit, for formatting: a metric's own unit when the figure is a metric
    /// (`ScenarioRun.unit(of:)`).
    public var rankingUnit: Metric.Unit?
    /// True when the ranking figure is a byte count (a byte figure, or a metric in bytes).
    public var rankingIsBytes: Bool

    /// Summarizes `run`'s cases per strategy.
    public init(_ run: ScenarioRun) {
        ranking = run.ranking
        rankingUnit = run.unit(of: run.ranking)
        rankingIsBytes = run.isBytes(run.ranking)
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

    /// A strategy's median ranking figure divided by the best strategy's; nil when the best is not positive.
    public func ratioToBest(_ summary: StrategySummary) -> Double? {
        guard let best = ranked.first?.rankingMedian, best > 0, let value = summary.rankingMedian else { return nil }
        return value / best
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
}
