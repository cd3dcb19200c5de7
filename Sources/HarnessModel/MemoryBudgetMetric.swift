/// Names of the metrics a memory budget adds to a case's result.
public enum MemoryBudgetMetric {
    /// Memory warnings posted to the case (count).
    public static let warnings = "memoryWarnings"
    /// When the sampler saw the limit exceeded, milliseconds since the case started.
    public static let killedAt = "killedAt"
    /// The footprint of that sample, bytes.
    public static let footprintAtKill = "footprintAtKill"
    /// That footprint minus the limit, bytes: the overshoot the sampler saw.
    public static let overshoot = "limitOvershoot"
    /// The footprint just before the killed result was written, minus the limit, bytes: what the
    /// workload added while the harness was stopping it.
    public static let overshootAtExit = "limitOvershootAtExit"
}

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

    /// `killed by memory limit at 0.71 s, 256.40 MiB` (medians when several were).
    public var description: String {
        "killed by memory limit at \(Units.fixed(medianKilledAtMilliseconds / 1000, decimals: 2)) s, \(Units.formatBytes(medianFootprintBytes))"
            + (killedCount > 1 ? " (median of \(killedCount))" : "")
    }
}

extension ScenarioRun {
    /// Strategies with cases stopped by the memory limit, in file order.
    public var memoryLimitKills: [MemoryLimitKills] {
        strategies.compactMap { strategy in
            let cases = self.cases.filter { $0.strategy == strategy }
            let killed = cases.filter { $0.status == .killedByMemoryLimit }
            guard !killed.isEmpty else { return nil }
            return MemoryLimitKills(
                strategy: strategy, killedCount: killed.count, caseCount: cases.count,
                medianKilledAtMilliseconds: Statistics.median(killed.compactMap { $0.metric(MemoryBudgetMetric.killedAt)?.value }) ?? 0,
                medianFootprintBytes: Statistics.median(killed.compactMap { $0.metric(MemoryBudgetMetric.footprintAtKill)?.value }) ?? 0
            )
        }
    }
}
