import AllocatorProbe
import HarnessModel

extension BuiltInStep {
    /// `repeat: {times: 20, warmup: 3, steps: [present, dismiss]}`: runs the nested steps `times`
    /// times; after each iteration the harness settles and reads the live heap, and fits a line
    /// to the iterations after the warm-up (growth per iteration).
    public static let `repeat` = StepDescriptor(
        "repeat", "Run the nested 'steps' several times, reading the live heap after each iteration (growth per iteration).",
        arguments: [
            .count("times", default: 10, range: 3...1_000_000, "Iterations."),
            .count("warmup", default: 2, range: 0...1_000_000,
                   "Leading iterations left out of the growth fit (lazy globals, framework caches)."),
            .duration("settle", default: .milliseconds(5), range: .zero ... .seconds(60),
                      "Wait after each iteration, before the live heap is read."),
        ]
    )

    /// Iterations a `repeat` step needs after its warm-up: a line through fewer leaves no spread to bound its slope.
    public static let minimumMeasuredIterations = 3
}

extension CaseExecutor {
    /// Runs a `repeat` step: its body `times` times, each iteration followed by a settle and a
    /// reading of the live heap (`stats.allocated` minus the thread caches, one snapshot).
    ///
    /// The readings go into storage reserved before the first iteration, so recording them
    /// allocates nothing the next reading could see.
    static func runRepeat(_ step: StepInvocation, probe: JemallocProbe,
                          runStep: (StepInvocation) throws -> Void) throws -> GrowthSeries {
        let times = step.arguments.count("times")
        let settleNanoseconds = step.arguments.duration("settle").nanoseconds
        let body = step.body ?? []
        var liveBytes: [Int] = []
        liveBytes.reserveCapacity(times)
        for _ in 0..<times {
            for bodyStep in body {
                try runStep(bodyStep)
            }
            settle(probe, nanoseconds: settleNanoseconds)
            liveBytes.append(liveHeapBytes(probe))
        }
        return GrowthSeries(phase: step.phase, warmupIterations: step.arguments.count("warmup"),
                            liveBytesAfterIteration: liveBytes)
    }

    /// `stats.allocated` minus the freed regions held in thread caches, from one snapshot, bytes.
    static func liveHeapBytes(_ probe: JemallocProbe) -> Int {
        let allocated = probe.allocatedBytes()
        return allocated - probe.threadCacheBytes()
    }
}
