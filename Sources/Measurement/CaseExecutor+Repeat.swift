import AllocatorProbe
import HarnessModel
import WorkloadKit

extension CaseExecutor {
    /// Runs a `repeat` step: its body `times` times, each iteration followed by a settle and a
    /// reading of the live heap (`stats.allocated` minus the thread caches, one snapshot).
    ///
    /// The readings go into storage reserved before the first iteration, so recording them
    /// allocates nothing the next reading could see. With `zeroingDeadStack` (a heap graph captured after each
    /// iteration) the stack below this frame, where the iteration's calls ran, is zeroed before `afterIteration`.
    package static func runRepeat(
        _ step: StepInvocation, probe: JemallocProbe, zeroingDeadStack: Bool = false,
        afterIteration: (Int) -> Void = { _ in }, runStep: (StepInvocation) throws -> Void
    ) throws -> GrowthSeries {
        let times = step.arguments.count("times")
        let settleNanoseconds = step.arguments.duration("settle").nanoseconds
        let body = step.body ?? []
        var liveBytes: [Int] = []
        liveBytes.reserveCapacity(times)
        for iteration in 1...times {
            for bodyStep in body {
                try runStep(bodyStep)
            }
            CaseSequence.settle(probe, nanoseconds: settleNanoseconds)
            liveBytes.append(liveHeapBytes(probe))
            if zeroingDeadStack { Agent.clearDeadStack() }
            afterIteration(iteration)
        }
        return GrowthSeries(
            phase: step.phase, warmupIterations: step.arguments.count("warmup"),
            liveBytesAfterIteration: liveBytes)
    }

    /// `stats.allocated` minus the freed regions held in thread caches, from one snapshot, bytes.
    static func liveHeapBytes(_ probe: JemallocProbe) -> Int {
        probe.liveBytes()
    }
}
