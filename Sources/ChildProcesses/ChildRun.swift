import Foundation
import HarnessModel

#if os(Linux)
    import Glibc
#endif

/// A run of a program whose output is kept: what it printed and how it ended. Every run has a bound: a child that
/// outlives it is stopped, so a hang ends as `timedOut` instead of stalling its caller. The one way tests, the
/// program corpus and tools start a child and read what it printed (the fault tests spawn theirs with posix_spawn,
/// to set its signal mask and close its streams).
public struct ChildRun: Sendable {
    /// How it ended; nil when it could not be reaped.
    public var termination: TerminationStatus?
    public var stdout: String
    public var stderr: String
    /// True when the child outlived its bound and was stopped.
    public var timedOut: Bool

    /// The status a shell shows (the exit status, or 128 + the signal); -1 when the child could not be reaped.
    public var status: Int32 { termination?.shellStatus ?? -1 }

    /// stdout with the check table's wrapped failure messages joined again: the table keeps to 100 columns,
    /// breaking a message at a space into a line break and six spaces.
    public var unwrappedStdout: String { stdout.replacingOccurrences(of: "\n      ", with: " ") }

    /// Runs `binary` with `arguments` and `environment` (this process's when nil; in `directory` when given;
    /// stdin empty) for at most `timeout`; a child still running then gets `stopSignal` (SIGTERM lets a tool
    /// such as SwiftPM end its own children), and 10 s later SIGKILL with its process group. The wait sleeps
    /// until the child ends (a pidfd), it does not poll; stdout and stderr are drained on threads of their own
    /// so a chatty child cannot block on a full pipe.
    public static func run(
        _ binary: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Duration,
        directory: String? = nil, stopSignal: Int32 = SIGKILL
    ) throws -> ChildRun {
        let out = try ChildProcess.pipe()
        let err = try ChildProcess.pipe()
        let child: ChildProcess
        do {
            defer {
                // The child has its own copies; ours must close, or the pipes never reach their end.
                close(out.write)
                close(err.write)
            }
            child = try ChildProcess.spawn(
                path: binary, arguments: arguments, environment: environment ?? ProcessInfo.processInfo.environment,
                stdout: out.write, stderr: err.write, workingDirectory: directory)
        } catch {
            close(out.read)
            close(err.read)
            throw error
        }
        let stdout = Drain(out.read)
        let stderr = Drain(err.read)
        var ended = try child.wait(timeoutNanoseconds: timeout.nanoseconds)
        let timedOut = ended == nil
        if timedOut {
            child.send(stopSignal)
            ended = try child.wait(timeoutNanoseconds: ChildProcess.killWaitNanoseconds) ?? child.kill()
        }
        return ChildRun(
            termination: ended?.termination, stdout: stdout.text(), stderr: stderr.text(), timedOut: timedOut)
    }

    /// Reads a pipe to its end on a thread of its own.
    private final class Drain: @unchecked Sendable {
        // Safe: `data` is written by the reading thread only, and read after `done` is signalled.
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ descriptor: Int32) {
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
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
