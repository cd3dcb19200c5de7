import HarnessModel

/// Made-up profiles of two strategies of the live-query scenario, as Attribution would build them.
enum AttributionFixture {
    static let executable = "/work/.build/release/memharness"
    static let swiftCore = "/opt/swift/usr/lib/swift/linux/libswiftCore.so"
    static let dispatch = "/opt/swift/usr/lib/swift/linux/libdispatch.so"
    static let mebibyte = 1_048_576

    static let frames: [AllocationFrame] = [
        AllocationFrame(
            function: "LiveQueryCase.run(_:context:)", file: "/work/Sources/Workloads/LiveQuery/LiveQueryCase.swift",
            line: 57, module: executable),
        AllocationFrame(
            function: "LiveQueryApp.deliver(_:)", file: "/work/Sources/Workloads/LiveQuery/LiveQueryApp.swift",
            line: 42, module: executable),
        AllocationFrame(function: "specialized Array.append(_:)", module: executable, isLibrary: true),
        AllocationFrame(
            function: "DocumentStore.apply(_:)", file: "/work/Sources/Workloads/DocumentStore/DocumentStore.swift",
            line: 88, module: executable),
        AllocationFrame(
            function: "specialized _NativeDictionary.resize(capacity:)", module: swiftCore, isLibrary: true),
        AllocationFrame(function: "_dispatch_worker_thread2", module: dispatch, isLibrary: true),
        AllocationFrame(function: "_dispatch_client_callout", module: dispatch, isLibrary: true),
        AllocationFrame(
            function: "closure #1 in LiveQueryApp.observe()",
            file: "/work/Sources/Workloads/LiveQuery/LiveQueryApp.swift", line: 30, module: executable),
        AllocationFrame(function: "DispatchQueue.async(execute:)", module: executable, isLibrary: true),
        AllocationFrame(
            function: "LiveQueryApp.enqueue(_:)", file: "/work/Sources/Workloads/LiveQuery/LiveQueryApp.swift",
            line: 61, module: executable),
        AllocationFrame(
            function: "Document.init(fields:) <with \"markup\" & a | pipe>",
            file: "/work/Sources/Workloads/DocumentStore/Document.swift", line: 12, module: executable),
        AllocationFrame(
            function: "LiveQueryApp.deliver(_:)", file: "/work/Sources/Workloads/LiveQuery/LiveQueryApp.swift",
            line: 44, module: executable),
    ]

    /// `unbounded-dispatch`: the queue of pending deliveries holds most of the peak.
    static let unbounded = AllocationProfile(
        frames: frames,
        stacks: [
            AllocationStack(frameIndices: [0, 1, 2], peakLiveBytes: 131 * mebibyte, peakLiveCount: 13_414),
            AllocationStack(frameIndices: [0, 9, 8], peakLiveBytes: 7 * mebibyte, peakLiveCount: 7_168),
            AllocationStack(frameIndices: [0, 3, 4], peakLiveBytes: 6 * mebibyte, peakLiveCount: 96),
            AllocationStack(frameIndices: [5, 6, 7, 1], peakLiveBytes: 3 * mebibyte, peakLiveCount: 48),
            AllocationStack(frameIndices: [0, 3, 10], peakLiveBytes: mebibyte / 2, peakLiveCount: 8),
            AllocationStack(frameIndices: [0, 11], peakLiveBytes: 65_536, peakLiveCount: 1),
            AllocationStack(frameIndices: [0, 3], peakLiveBytes: 0, peakLiveCount: 0),
        ],
        peakLevelBytes: 150 * mebibyte, baselineLevelBytes: 2 * mebibyte, peakTimeNanoseconds: 2_400_000_000,
        sampleMeanBytes: 65_536,
        iterations: (0..<5).map { iteration in
            IterationLiveSet(
                phase: "churn", iteration: iteration, timeNanoseconds: Int64(iteration) * 100_000_000,
                levelBytes: (20 + iteration) * mebibyte,
                live: [
                    StackLiveBytes(stack: 0, liveBytes: (1 + iteration) * mebibyte, liveCount: 16 * (1 + iteration)),
                    StackLiveBytes(stack: 2, liveBytes: 6 * mebibyte + (iteration == 3 ? 65_536 : 0), liveCount: 96),
                ])
        })

    /// `signal-next`: the same workload holds one delivery at a time.
    static let signalNext = AllocationProfile(
        frames: frames,
        stacks: [
            AllocationStack(frameIndices: [0, 3, 4], peakLiveBytes: 6 * mebibyte, peakLiveCount: 96),
            AllocationStack(frameIndices: [0, 1, 2], peakLiveBytes: 2 * mebibyte, peakLiveCount: 205),
            AllocationStack(frameIndices: [5, 6, 7, 1], peakLiveBytes: 3 * mebibyte, peakLiveCount: 48),
            AllocationStack(frameIndices: [0, 3, 10], peakLiveBytes: mebibyte, peakLiveCount: 16),
        ],
        peakLevelBytes: 12 * mebibyte, baselineLevelBytes: 2 * mebibyte, peakTimeNanoseconds: 2_000_000_000,
        sampleMeanBytes: 65_536)
}
