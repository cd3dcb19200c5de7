import Foundation
import Testing

#if os(Linux)
    import Glibc
#endif

/// A run of a built binary or a tool: what it printed and how it ended. Every run has a bound: a child that
/// outlives it is stopped, so a hang fails its test instead of stalling the suite. The one way every test
/// target starts a child process (the fault tests spawn theirs with posix_spawn, to set its signal mask).
public struct ChildRun: Sendable {
    /// The exit status (`terminationStatus`; -1 when the child could not be reaped).
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// True when the child outlived its bound and was stopped.
    public var timedOut: Bool

    /// stdout with the check table's wrapped failure messages joined again: the table keeps to 100 columns,
    /// breaking a message at a space into a line break and six spaces.
    public var unwrappedStdout: String { stdout.replacingOccurrences(of: "\n      ", with: " ") }

    /// Runs `binary` with `arguments` and `environment` (this process's when nil; in `directory` when given;
    /// stdin empty) for at most `timeout`; a child still running then gets `stopSignal` (SIGTERM lets a tool
    /// such as SwiftPM end its own children). The wait sleeps until the child ends (its termination handler), it
    /// does not poll; stdout and stderr are drained on threads of their own so a chatty child cannot block on a
    /// full pipe.
    public static func run(
        _ binary: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Duration,
        directory: String? = nil, stopSignal: Int32 = SIGKILL
    ) throws -> ChildRun {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        let stdout = Drain(out.fileHandleForReading)
        let stderr = Drain(err.fileHandleForReading)
        var timedOut = false
        if ended.wait(timeout: .now() + seconds) == .timedOut {
            timedOut = true
            kill(process.processIdentifier, stopSignal)
            // A stopped child ends within moments unless it ignores the signal or the kernel is stuck; past 10 s
            // more the status is -1.
            _ = ended.wait(timeout: .now() + 10)
        }
        let status = process.isRunning ? -1 : process.terminationStatus
        return ChildRun(status: status, stdout: stdout.text(), stderr: stderr.text(), timedOut: timedOut)
    }

    /// Reads a pipe to its end on a thread of its own.
    private final class Drain: @unchecked Sendable {
        // Safe: `data` is written by the reading thread only, and read after `done` is signalled.
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }
        }

        func text() -> String {
            // The child has exited (or was killed): the pipe ends within moments, unless a grandchild holds it.
            _ = done.wait(timeout: .now() + 10)
            return String(decoding: data, as: UTF8.self)
        }
    }
}
