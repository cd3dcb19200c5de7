import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// The memharness agent (`libmemharness-agent.so`) as seen from the process it is preloaded into:
/// exact counts of every allocation, sampled allocation stacks, peak snapshots and records.
///
/// The runner preloads the agent into a case process when the case needs it (exact peaks, attribution);
/// its functions are found at run time with `dlsym`, so in a process without the agent `isLoaded` is false
/// and every reading is nil. The counters are process-wide: live size-class bytes of every block the
/// malloc family handed out and not yet freed, on whatever thread.
public enum Agent {
    /// The library's file name, built by `swift build --product memharness-agent` beside the executables.
    public static let libraryName = "libmemharness-agent.so"

    /// How to get the library when it is missing.
    public static let buildHint =
        "build it with `make build`, or `swift build --product memharness-agent` (with `-c release` for a release "
        + "build)"

    /// True when the agent is loaded into this process.
    public static var isLoaded: Bool { functions != nil }

    /// True when this process counts every allocation (the agent is loaded with `MEMHARNESS_AGENT_EXACT=1`).
    public static var isCounting: Bool { liveBytes() != nil }

    /// True when allocation stacks are sampled.
    public static var recordsStacks: Bool { (functions?.stacksEnabled() ?? 0) == 1 }

    /// Live size-class bytes now; nil unless counting.
    public static func liveBytes() -> Int? { reading(functions?.liveBytes()) }

    /// The high-water mark since the last call (absolute bytes), restarting it from the live bytes now; nil unless
    /// counting.
    public static func takePeak() -> Int? { reading(functions?.takePeak()) }

    /// The phase high-water mark since the last call (absolute bytes), restarting it at the live bytes now; nil unless
    /// counting.
    public static func takePhasePeak() -> Int? { reading(functions?.takePhasePeak()) }

    /// Allocating calls counted so far; nil unless counting.
    public static func allocationCalls() -> Int? { reading(functions?.allocationCount()) }

    /// True when malloc and calloc take their sizes from jemalloc's size-class formula (verified at start-up).
    public static var usesSizeClassFormula: Bool { (functions?.fastSizeClasses() ?? 0) == 1 }

    /// True when malloc and free forward to jemalloc's own malloc and free.
    public static var forwardsToFastPaths: Bool { (functions?.forwardsToFastPaths() ?? 0) == 1 }

    /// Stores a labelled copy of the live set per stack (`baseline`, `iteration.<phase>.<k>`).
    public static func mark(_ label: String, timeNanoseconds: Int64) {
        functions?.mark(label, timeNanoseconds)
    }

    /// At a case's baseline: the peak snapshot restarts; the next one is taken above `levelBytes`.
    public static func restartPeakSnapshot(levelBytes: Int) {
        functions?.restartPeakSnapshot(Int64(levelBytes))
    }

    /// The calling thread's stack, innermost return address first; empty without the agent.
    public static func captureStack(limit: Int = 64) -> [UInt] {
        guard let functions else { return [] }
        var frames = [UInt](repeating: 0, count: max(0, limit))
        let count = frames.withUnsafeMutableBufferPointer {
            functions.captureStack($0.baseAddress, Int32($0.count))
        }
        return Array(frames.prefix(Int(max(0, count))))
    }

    /// `captureStack()` as a closure declared here, so its frame folds away with the agent's own.
    public static let stackCapture: @Sendable () -> [UInt] = { captureStack() }

    /// Writes the agent's record to `path`; nil when written, else why not.
    public static func writeRecord(to path: String) -> String? {
        guard let functions else { return "the agent is not loaded into this process" }
        let status = functions.writeRecord(path)
        return status == 0 ? nil : "cannot write \(path): \(String(cString: strerror(status)))"
    }

    /// One call of the malloc family made by `selfCheck()`, with what the count should and did do.
    public struct CheckRow: Sendable, Hashable {
        /// The entry point, e.g. `posix_memalign`.
        public var name: String
        /// Expected move of the live bytes on the call (the block's usable size), bytes.
        public var expectedDeltaBytes: Int
        /// Observed move, bytes.
        public var deltaBytes: Int
        /// Expected move when the block is released, bytes.
        public var expectedReleaseBytes: Int
        /// Observed move, bytes.
        public var releaseBytes: Int
        /// Allocating calls counted during the call.
        public var countedCalls: Int

        public init(
            name: String, expectedDeltaBytes: Int, deltaBytes: Int, expectedReleaseBytes: Int, releaseBytes: Int,
            countedCalls: Int
        ) {
            self.name = name
            self.expectedDeltaBytes = expectedDeltaBytes
            self.deltaBytes = deltaBytes
            self.expectedReleaseBytes = expectedReleaseBytes
            self.releaseBytes = releaseBytes
            self.countedCalls = countedCalls
        }

        /// True when the count moved exactly as expected both ways and the call was counted.
        public var isConsistent: Bool {
            deltaBytes == expectedDeltaBytes && releaseBytes == expectedReleaseBytes && countedCalls >= 1
        }
    }

    /// Calls every entry point of the malloc family (C and C++, and a free on another thread) and
    /// reports how the count moved; nil unless counting. Run it while no other thread allocates.
    public static func selfCheck() -> [CheckRow]? {
        guard let functions else { return nil }
        let capacity = 64
        // name, expected, delta, expected release, release, calls: the C row's layout.
        var rows = [CheckRowLayout](repeating: CheckRowLayout(), count: capacity)
        let count = Int(rows.withUnsafeMutableBytes { functions.selfCheck($0.baseAddress, Int32(capacity)) })
        guard count >= 0 else { return nil }
        return rows.prefix(min(count, capacity)).map { row in
            CheckRow(
                name: row.name.map { String(cString: $0) } ?? "?", expectedDeltaBytes: Int(row.expectedDelta),
                deltaBytes: Int(row.delta), expectedReleaseBytes: Int(row.expectedRelease),
                releaseBytes: Int(row.release), countedCalls: Int(row.calls))
        }
    }

    private static func reading(_ value: Int64?) -> Int? {
        guard let value, value >= 0 else { return nil }
        return Int(value)
    }

    /// The agent's exported functions, found once; nil when the agent is not in the process.
    private static let functions = AgentFunctions()
}

/// `memharness_agent_check_row`: a static C string and five 64-bit figures.
private struct CheckRowLayout {
    var name: UnsafePointer<CChar>?
    var expectedDelta: Int64 = 0
    var delta: Int64 = 0
    var expectedRelease: Int64 = 0
    var release: Int64 = 0
    var calls: Int64 = 0
}

/// The agent's exported function `name` as a C function of type `T`; nil when the agent is not in the process.
func agentFunction<T>(_ name: String, as _: T.Type) -> T? {
    // RTLD_DEFAULT is the null handle: the global scope, where a preloaded library's symbols are.
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
    return unsafeBitCast(symbol, to: T.self)
}

/// The agent's C functions, looked up with `dlsym(RTLD_DEFAULT, ...)`.
private struct AgentFunctions: Sendable {
    let liveBytes: @convention(c) () -> Int64
    let takePeak: @convention(c) () -> Int64
    let takePhasePeak: @convention(c) () -> Int64
    let allocationCount: @convention(c) () -> Int64
    let fastSizeClasses: @convention(c) () -> Int32
    let forwardsToFastPaths: @convention(c) () -> Int32
    let selfCheck: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32
    let stacksEnabled: @convention(c) () -> Int32
    let mark: @convention(c) (UnsafePointer<CChar>?, Int64) -> Void
    let restartPeakSnapshot: @convention(c) (Int64) -> Void
    let captureStack: @convention(c) (UnsafeMutablePointer<UInt>?, Int32) -> Int32
    let writeRecord: @convention(c) (UnsafePointer<CChar>?) -> Int32

    init?() {
        guard let version = agentFunction("memharness_agent_version", as: (@convention(c) () -> Int32).self),
            version() == 2,
            let liveBytes = agentFunction("memharness_agent_live_bytes", as: (@convention(c) () -> Int64).self),
            let takePeak = agentFunction("memharness_agent_take_peak", as: (@convention(c) () -> Int64).self),
            let takePhasePeak = agentFunction(
                "memharness_agent_take_phase_peak", as: (@convention(c) () -> Int64).self),
            let allocationCount = agentFunction(
                "memharness_agent_allocation_count", as: (@convention(c) () -> Int64).self),
            let fastSizeClasses = agentFunction(
                "memharness_agent_fast_size_classes", as: (@convention(c) () -> Int32).self),
            let forwards = agentFunction(
                "memharness_agent_forwards_to_fast_paths", as: (@convention(c) () -> Int32).self),
            let selfCheck = agentFunction(
                "memharness_agent_self_check", as: (@convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32).self),
            let stacksEnabled = agentFunction("memharness_agent_stacks_enabled", as: (@convention(c) () -> Int32).self),
            let mark = agentFunction(
                "memharness_agent_mark", as: (@convention(c) (UnsafePointer<CChar>?, Int64) -> Void).self),
            let restart = agentFunction(
                "memharness_agent_restart_peak_snapshot", as: (@convention(c) (Int64) -> Void).self),
            let captureStack = agentFunction(
                "memharness_agent_capture_stack",
                as: (@convention(c) (UnsafeMutablePointer<UInt>?, Int32) -> Int32).self),
            let writeRecord = agentFunction(
                "memharness_agent_write_record", as: (@convention(c) (UnsafePointer<CChar>?) -> Int32).self)
        else { return nil }
        self.liveBytes = liveBytes
        self.takePeak = takePeak
        self.takePhasePeak = takePhasePeak
        self.allocationCount = allocationCount
        self.fastSizeClasses = fastSizeClasses
        self.forwardsToFastPaths = forwards
        self.selfCheck = selfCheck
        self.stacksEnabled = stacksEnabled
        self.mark = mark
        self.restartPeakSnapshot = restart
        self.captureStack = captureStack
        self.writeRecord = writeRecord
    }
}
