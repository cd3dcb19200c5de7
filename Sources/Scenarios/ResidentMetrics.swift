import HarnessModel
import WorkloadKit

extension ResidentBreakdown {
    /// The metrics of a program's resident set explained (`rssLiveHeap`, ..., and each `AtEnd`), for thresholds of a
    /// scenario with a command strategy; none otherwise.
    static func metricDescriptors(of strategies: [StrategyPlan]) -> [MetricDescriptor] {
        guard strategies.contains(where: { $0.program != nil }) else { return [] }
        return [Point.peak, .end].flatMap { point in
            let zero = ResidentBreakdown(
                point: point, timeNanoseconds: 0, measuredBytes: 0, measuredBeforeBytes: 0, liveHeapBytes: 0,
                activeBeyondAllocatedBytes: 0, dirtyBytes: 0, muzzyBytes: 0, allocatorPagesBytes: 0,
                allocatorReportedResidentBytes: 0, stacksBytes: 0, mappedFilesBytes: 0, otherAnonymousBytes: 0)
            return zero.metrics.map {
                MetricDescriptor($0.name, $0.unit, "a part of the program's resident set explained, at its \(point)")
            }
        }
    }
}
