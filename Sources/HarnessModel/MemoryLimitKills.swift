/// The cases of one strategy that were stopped by the memory limit.
public struct MemoryLimitKills: Sendable, Hashable {
    public var strategy: String
    /// Cases stopped by the limit.
    public var killedCount: Int
    /// All cases of the strategy.
    public var caseCount: Int
    /// Median time of the stop, milliseconds since the case started.
    public var medianKilledAtMilliseconds: Double
    /// Median footprint at the stop, bytes.
    public var medianFootprintBytes: Double
}

extension ScenarioRun {
    /// Strategies with cases stopped by the memory limit, in file order.
    public var memoryLimitKills: [MemoryLimitKills] {
        strategies.compactMap { strategy in
            let cases = self.cases.filter { $0.strategy == strategy }
            let hits = cases.compactMap { result -> MemoryLimitHit? in
                if case .killedByMemoryLimit(let hit, _) = result.outcome { return hit }
                return nil
            }
            guard !hits.isEmpty else { return nil }
            return MemoryLimitKills(
                strategy: strategy, killedCount: hits.count, caseCount: cases.count,
                medianKilledAtMilliseconds: Statistics.median(hits.map { Double($0.timeNanoseconds) / 1e6 }) ?? 0,
                medianFootprintBytes: Statistics.median(hits.map { Double($0.footprintBytes) }) ?? 0
            )
        }
    }
}
