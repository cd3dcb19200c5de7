/// How fast a case's heap grew during one phase: the figure that does not depend on how long the
/// phase ran, where the peak does (a backlog that grows for as long as a burst lasts).
extension CaseMeasurements {
    /// Bytes per second: the least-squares slope of allocated bytes over time across the phase's samples
    /// (up to the memory limit's stop for a case it stopped). A backlog that grows for as long as the
    /// phase lasts has a steep slope; memory that is taken once and held has one near zero. nil when the
    /// phase has fewer than three samples, or no samples were kept.
    public func growthPerSecond(inPhase phase: String) -> Double? {
        guard let samples, let index = samples.phaseNames.firstIndex(of: phase) else { return nil }
        let rows = samples.phaseIndex.indices.filter { samples.phaseIndex[$0] == index }
        guard rows.count >= 3 else { return nil }
        let points = rows.map { (x: Double(samples.timeNanoseconds[$0]) / 1e9, y: Double(samples.allocatedBytes[$0])) }
        return LinearFit.leastSquares(points)?.slope
    }
}

/// One strategy's growth rate during the scenario's rate phase: the median over every case that
/// kept samples, those stopped by the memory limit included (their growth is what got them stopped).
public struct StrategyGrowth: Sendable, Hashable {
    public var strategy: String
    /// Median bytes per second.
    public var bytesPerSecond: Double
    /// Cases the median is over.
    public var caseCount: Int

    public init(strategy: String, bytesPerSecond: Double, caseCount: Int) {
        self.strategy = strategy
        self.bytesPerSecond = bytesPerSecond
        self.caseCount = caseCount
    }
}

extension ScenarioRun {
    /// Each strategy's growth during `ratePhase`, in file order; empty when the scenario names no rate phase.
    public var growthRates: [StrategyGrowth] {
        guard let ratePhase else { return [] }
        return strategies.compactMap { strategy in
            let rates = cases.filter { $0.strategy == strategy }.compactMap {
                $0.measurements?.growthPerSecond(inPhase: ratePhase)
            }
            return Statistics.median(rates).map {
                StrategyGrowth(strategy: strategy, bytesPerSecond: $0, caseCount: rates.count)
            }
        }
    }
}
