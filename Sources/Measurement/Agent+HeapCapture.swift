import Foundation
import HarnessModel
import HeapGraph

#if os(Linux)
    import Glibc
#endif

extension Agent {
    /// Captures this process's heap as a named graph: the agent stops every other thread and writes the capture to
    /// a temporary file, and this thread names its types (from the Swift runtime's metadata) and roots.
    ///
    /// Never throws for a failed capture: the failure is a value that says why (a capture that fails never fails
    /// the case). Allocates freely (after the capture itself), so call it outside any measured span.
    public static func captureHeap(label: String) -> HeapCaptureResult {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("memharness-heap-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).heap").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        if let failure = writeHeapCapture(to: path, label: label) { return .failure(failure) }
        return readHeapCapture(at: path, label: label)
    }

    /// True when the agent is preloaded into this process and tracks every live block (`MEMHARNESS_AGENT_HEAP=1`):
    /// a heap capture can be taken.
    public static var heapTrackingEnabled: Bool { HeapFunctions.shared.map { $0.enabled() == 1 } ?? false }

    /// Zeroes 256 KiB of stack below the caller, where returned frames (a workload's, a fixture's) were: a
    /// conservative scan would take their dead slots for references (the capture scans from its caller up). Call it
    /// just before a capture. Temporary allocations of up to 1 KiB are on the stack; 256 nested frames of them
    /// cover the span.
    @inline(never)
    public static func clearDeadStack(_ depth: Int = 256) {
        withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 16) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            if depth > 0 { clearDeadStack(depth - 1) }
        }
    }

    /// The agent's capture of this process's heap, written to `path` (through `path`.tmp and a rename); nil when
    /// written, else why not. Allocates nothing but the C string of the path.
    public static func writeHeapCapture(to path: String, label: String) -> HeapCaptureFailure? {
        guard let functions = HeapFunctions.shared, functions.enabled() == 1 else {
            return HeapCaptureFailure(
                label: label, reason: .agentNotLoaded,
                detail: "the agent is not preloaded with MEMHARNESS_AGENT_HEAP=1 into this process")
        }
        let status = functions.capture(path, String(label.prefix(63)))
        guard status != 0 else { return nil }
        let detail = functions.failure().map { String(cString: $0) } ?? "error \(status)"
        let reason: HeapCaptureFailure.Reason =
            switch status {
            case ENOTSUP: .agentNotLoaded
            case ENOMEM: .outOfMemory
            default: .other
            }
        return HeapCaptureFailure(label: label, reason: reason, detail: detail)
    }

    /// A capture written by `writeHeapCapture` (of this process) or by the agent of another process (a program's
    /// capture at exit), read and named from `memory`: the type metadata the blocks point at lives as long as the
    /// process, so a capture of this process can be named any time after it was written, and another process's while
    /// it is held at its exit.
    public static func readHeapCapture(at path: String, label: String, memory: CaptureMemory = .thisProcess)
        -> HeapCaptureResult
    {
        do {
            // Read in chunks straight into the snapshot's columns: neither the file nor a copy of its blocks is held.
            let capture = try CaptureFile(path: path)
            var naming = CaptureNaming(capture: capture, memory: memory)
            return .snapshot(try naming.snapshot())
        } catch {
            return .failure(HeapCaptureFailure(label: label, reason: .unreadable, detail: "\(error)"))
        }
    }
}

/// The agent's heap functions, looked up with `dlsym(RTLD_DEFAULT, ...)` (nil without the agent).
private struct HeapFunctions: Sendable {
    let enabled: @convention(c) () -> Int32
    let capture: @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let failure: @convention(c) () -> UnsafePointer<CChar>?

    static let shared = HeapFunctions()

    private init?() {
        guard let enabled = agentFunction("memharness_agent_heap_enabled", as: (@convention(c) () -> Int32).self),
            let capture = agentFunction(
                "memharness_agent_capture_heap",
                as: (@convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32).self),
            let failure = agentFunction(
                "memharness_agent_heap_failure", as: (@convention(c) () -> UnsafePointer<CChar>?).self)
        else { return nil }
        self.enabled = enabled
        self.capture = capture
        self.failure = failure
    }
}
