import CSystem
import Foundation
import HarnessModel
import HeapGraph
import Symbols

#if os(Linux)
    import Glibc
#endif

extension Agent {
    /// Which frames of the capturing thread are the program's.
    ///
    /// The capture scans a thread's stack conservatively (any word that looks like a pointer keeps its block): a slot
    /// a function never wrote still holds whatever an earlier, deeper call left there. So the frames of the thread
    /// that asks must hold nothing stale of the program: a caller zeroes the dead stack (`clearDeadStack`) from the
    /// frame that was live while the program's calls ran, just before it enters the capture path, and then every frame
    /// of the capture path is made on zeroed memory and holds only what it wrote.
    public enum ProgramFrames: Sendable, Hashable {
        /// The frames from the capture call's caller up, and that caller's callee-saved registers (the agent's own
        /// frames below are never roots).
        case callers
        /// No frame or register of the capturing thread (its thread-local storage still is a root).
        case none
    }

    /// Zeroes 256 KiB of stack below the caller, where the calls it made (a workload's, an expectation's closure) ran
    /// and returned: see `ProgramFrames`. Temporary allocations of up to 1 KiB are on the stack; 256 nested frames of
    /// them cover the span, and touch it from the top down (a guard page below is never skipped).
    @inline(never)
    public static func clearDeadStack(_ depth: Int = 256) {
        withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 16) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            if depth > 0 { clearDeadStack(depth - 1) }
        }
    }

    /// Where a capture is in the file it was appended to.
    public struct CaptureExtent: Sendable, Hashable {
        public var offset: Int
        public var length: Int
    }

    /// A capture appended to a file: where it is, or why there is none.
    public enum CaptureWrite: Sendable, Hashable {
        case written(CaptureExtent)
        case failed(HeapCaptureFailure)
    }

    /// Captures this process's heap as a named graph: the agent stops every other thread and writes the capture to a
    /// file that has no name (nothing is left, whatever ends the process), and this thread names its types (from the
    /// Swift runtime's metadata) and roots.
    ///
    /// Never throws for a failed capture: the failure is a value that says why (a capture that fails never fails
    /// the case). Allocates freely (after the capture itself), so call it outside any measured span.
    public static func captureHeap(label: String, programFrames: ProgramFrames) -> HeapCaptureResult {
        let descriptor = memharness_open_unnamed_file(FileManager.default.temporaryDirectory.path)
        guard descriptor >= 0 else {
            return .failure(
                HeapCaptureFailure(
                    label: label, reason: .other, detail: "cannot open a capture file (errno \(errno))"))
        }
        defer { close(descriptor) }
        switch writeHeapCapture(appendingTo: descriptor, label: label, programFrames: programFrames) {
        case .failed(let failure): return .failure(failure)
        case .written(let extent): return readHeapCapture(descriptor: descriptor, extent: extent, label: label)
        }
    }

    /// Runs `body` with this thread's allocations marked as the harness's own (`memharness_agent_harness_begin`): the
    /// agent tracks them without walking their stacks and never samples them. Naming and analysing captures allocate
    /// millions of times in the process they measure; none of it is the program's.
    public static func asHarness<T>(_ body: () throws -> T) rethrows -> T {
        guard let functions = HeapFunctions.shared else { return try body() }
        functions.harnessBegin()
        defer { functions.harnessEnd() }
        return try body()
    }

    /// True when the agent is preloaded into this process and tracks every live block (`MEMHARNESS_AGENT_HEAP=1`):
    /// a heap capture can be taken.
    public static var heapTrackingEnabled: Bool { HeapFunctions.shared.map { $0.enabled() == 1 } ?? false }

    /// The agent's capture of this process's heap, appended to the open file `descriptor`; where it is in the file,
    /// or why there is none. Allocates nothing but the C string of the label.
    public static func writeHeapCapture(
        appendingTo descriptor: Int32, label: String, programFrames: ProgramFrames
    ) -> CaptureWrite {
        guard let functions = HeapFunctions.shared, functions.enabled() == 1 else {
            return .failed(
                HeapCaptureFailure(
                    label: label, reason: .agentNotLoaded,
                    detail: "the agent is not preloaded with MEMHARNESS_AGENT_HEAP=1 into this process"))
        }
        let start = lseek(descriptor, 0, SEEK_END)
        let status = functions.capture(descriptor, String(label.prefix(63)), programFrames == .callers ? 1 : 0)
        let end = lseek(descriptor, 0, SEEK_END)
        guard status != 0 else { return .written(CaptureExtent(offset: Int(start), length: Int(end - start))) }
        let detail = functions.failure().map { String(cString: $0) } ?? "error \(status)"
        let reason: HeapCaptureFailure.Reason =
            switch status {
            case ENOTSUP: .agentNotLoaded
            case ENOMEM: .outOfMemory
            default: .other
            }
        return .failed(HeapCaptureFailure(label: label, reason: reason, detail: detail))
    }

    /// A capture `writeHeapCapture` appended to `descriptor` (of this process), read and named from this process's
    /// memory: the type metadata the blocks point at lives as long as the process, so it can be read any time after it
    /// was written.
    /// Without `namesStacks`, blocks get no allocation stack (none is symbolized): for a capture only reachability
    /// is asked of.
    public static func readHeapCapture(
        descriptor: Int32, extent: CaptureExtent, label: String, namesStacks: Bool = true
    ) -> HeapCaptureResult {
        name(memory: .thisProcess, label: label, namesStacks: namesStacks) { () throws(CaptureFileError) in
            try CaptureFile(descriptor: descriptor, offset: extent.offset, length: extent.length)
        }
    }

    /// Names the allocation stacks of the captures at `extents` of `descriptor` (this process's) in one batch: see
    /// `CaptureNaming.symbolizeStacks`. Captures that cannot be read are left to their own naming, which says why.
    public static func symbolizeStacks(of captures: [(descriptor: Int32, extent: CaptureExtent)]) {
        asHarness {
            let files = captures.compactMap { capture in
                try? CaptureFile(
                    descriptor: capture.descriptor, offset: capture.extent.offset, length: capture.extent.length)
            }
            CaptureNaming.symbolizeStacks(of: files)
        }
    }

    /// A capture the agent of another process wrote to `path` (a program's capture at exit), read and named from
    /// `memory`: the program's own while it is held at its exit, else nothing but its modules' symbols.
    public static func readHeapCapture(at path: String, label: String, memory: CaptureMemory) -> HeapCaptureResult {
        name(memory: memory, label: label) { () throws(CaptureFileError) in try CaptureFile(path: path) }
    }

    /// A capture the agent of another process wrote into `descriptor` (this process's copy of an unnamed file, from
    /// its start: a running program's capture on request), read and named from `memory`: the program's own while it
    /// is held stopped.
    /// `foldMemo`: one for every capture of the process (see `CaptureNaming.foldMemo`).
    public static func readHeapCapture(
        descriptor: Int32, length: Int, label: String, memory: CaptureMemory, foldMemo: FoldMemo
    ) -> HeapCaptureResult {
        name(memory: memory, label: label, foldMemo: foldMemo) { () throws(CaptureFileError) in
            try CaptureFile(descriptor: descriptor, offset: 0, length: length)
        }
    }

    private static func name(
        memory: CaptureMemory, label: String, namesStacks: Bool = true, foldMemo: FoldMemo? = nil,
        _ read: () throws(CaptureFileError) -> CaptureFile
    ) -> HeapCaptureResult {
        asHarness {
            do {
                // Read in chunks straight into the snapshot's columns: neither the file nor a copy of its blocks is
                // held.
                var naming = CaptureNaming(
                    capture: try read(), memory: memory, namesStacks: namesStacks, foldMemo: foldMemo)
                return .snapshot(try naming.snapshot())
            } catch {
                return .failure(HeapCaptureFailure(label: label, reason: .unreadable, detail: "\(error)"))
            }
        }
    }
}

extension Agent {
    /// What the capture at the peak left when it was disarmed.
    public struct PeakCaptureOutcome: Sendable, Hashable {
        /// The live blocks' bytes when the capture in the file was taken; nil when there is none.
        public var capturedLiveBytes: Int?
        /// The highest live blocks' bytes seen while armed.
        public var peakLiveBytes: Int
        /// Captures taken (each replaced the one before).
        public var captures: Int
        /// The time the captures took together (the case's threads stopped), nanoseconds.
        public var captureNanoseconds: Int64
    }

    /// Arms the agent's capture at the peak into `descriptor` (see `memharness_agent_arm_peak_capture`): at the
    /// first release that finds the live blocks' bytes `margin` (a fraction) and `minimumStepBytes` above the last
    /// capture's level. False when the agent does not track blocks.
    public static func armPeakCapture(descriptor: Int32, margin: Double, minimumStepBytes: Int) -> Bool {
        guard let arm = HeapFunctions.shared?.armPeak else { return false }
        return arm(descriptor, margin, Int64(minimumStepBytes)) == 0
    }

    /// Disarms it: what it left in its file.
    public static func disarmPeakCapture() -> PeakCaptureOutcome? {
        guard let disarm = HeapFunctions.shared?.disarmPeak else { return nil }
        var peak: Int64 = 0
        var captures: Int64 = 0
        var nanoseconds: Int64 = 0
        let level = disarm(&peak, &captures, &nanoseconds)
        return PeakCaptureOutcome(
            capturedLiveBytes: level >= 0 ? Int(level) : nil, peakLiveBytes: Int(peak), captures: Int(captures),
            captureNanoseconds: nanoseconds)
    }
}

/// The agent's heap functions, looked up with `dlsym(RTLD_DEFAULT, ...)` (nil without the agent).
private struct HeapFunctions: Sendable {
    let enabled: @convention(c) () -> Int32
    let capture: @convention(c) (Int32, UnsafePointer<CChar>?, Int32) -> Int32
    let failure: @convention(c) () -> UnsafePointer<CChar>?
    let harnessBegin: @convention(c) () -> Void
    let harnessEnd: @convention(c) () -> Void
    /// The capture at the peak (nil with an agent older than it: captures work without it).
    let armPeak: (@convention(c) (Int32, Double, Int64) -> Int32)?
    let disarmPeak: DisarmPeak?
    typealias DisarmPeak =
        @convention(c) (
            UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?
        ) -> Int64

    static let shared = HeapFunctions()

    private init?() {
        guard let enabled = agentFunction("memharness_agent_heap_enabled", as: (@convention(c) () -> Int32).self),
            let capture = agentFunction(
                "memharness_agent_capture_heap_fd",
                as: (@convention(c) (Int32, UnsafePointer<CChar>?, Int32) -> Int32).self),
            let failure = agentFunction(
                "memharness_agent_heap_failure", as: (@convention(c) () -> UnsafePointer<CChar>?).self),
            let harnessBegin = agentFunction("memharness_agent_harness_begin", as: (@convention(c) () -> Void).self),
            let harnessEnd = agentFunction("memharness_agent_harness_end", as: (@convention(c) () -> Void).self)
        else { return nil }
        armPeak = agentFunction(
            "memharness_agent_arm_peak_capture", as: (@convention(c) (Int32, Double, Int64) -> Int32).self)
        disarmPeak = agentFunction("memharness_agent_disarm_peak_capture", as: DisarmPeak.self)
        self.enabled = enabled
        self.capture = capture
        self.failure = failure
        self.harnessBegin = harnessBegin
        self.harnessEnd = harnessEnd
    }
}
