import Foundation
import HarnessModel

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// What a standard stream of the harness is connected to.
enum Stream {
    /// A file (created or truncated), read back after the run.
    case file(String)
    /// Closed, as a shell's `>&-` leaves it.
    case closed
    /// A pipe whose reader is already gone: every write fails with EPIPE.
    case brokenPipe
    /// This descriptor as it is (a pseudo-terminal's slave side, for instance).
    case descriptor(Int32)
}

/// How a process ended: the harness's own `TerminationStatus` (`shellStatus` is what a shell reports).
typealias Ending = TerminationStatus

/// The built `memharness` binary started as a child of the test, with default signal dispositions and an
/// empty signal mask (as a shell starts it), in a process group of its own, its streams where the test says.
final class HarnessProcess {
    let pid: pid_t
    private(set) var ending: Ending?

    /// The build folder: the directory of the running test binary.
    static let buildDirectory: URL = {
        // /proc/self/exe always resolves on Linux; argv[0] is the fallback for a process that lost it.
        let testBinary =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: testBinary).deletingLastPathComponent()
    }()

    static let binary = buildDirectory.appendingPathComponent("memharness").path

    /// Starts `executable` (default: memharness) with `arguments`; `environment` is added to the test's own
    /// (without GitHub's variables, which would change what the binary prints), `nil` values remove a variable.
    /// `blockedSignals` start blocked, as when a parent spawns the run from a thread that blocks them.
    init(
        _ arguments: [String], executable: String = HarnessProcess.binary, environment: [String: String?] = [:],
        stdout: Stream, stderr: Stream, blockedSignals: [Int32] = []
    ) throws {
        var variables = ProcessInfo.processInfo.environment
        variables["GITHUB_ACTIONS"] = nil
        variables["GITHUB_STEP_SUMMARY"] = nil
        for (key, value) in environment { variables[key] = value }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in blockedSignals { sigaddset(&mask, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var pipes: [Int32] = []
        defer { for descriptor in pipes { close(descriptor) } }
        for (target, stream) in [(Int32(1), stdout), (Int32(2), stderr)] {
            switch stream {
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .closed:
                posix_spawn_file_actions_addclose(&actions, target)
            case .brokenPipe:
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { throw FaultError("pipe: \(String(cString: strerror(errno)))") }
                close(ends[0])  // the reader is gone before the writer starts
                pipes.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], target)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        let argv = [executable] + arguments
        let envp = variables.map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        let status = withCStrings(argv) { argvPointer in
            withCStrings(envp) { envpPointer in
                posix_spawn(&child, executable, &actions, &attributes, argvPointer, envpPointer)
            }
        }
        guard status == 0 else { throw FaultError("cannot start \(executable): \(String(cString: strerror(status)))") }
        pid = child
    }

    deinit {
        // A test that failed before the end must not leave the harness running or unreaped.
        if ending == nil {
            kill(pid, SIGKILL)
            _ = wait(seconds: 10)
        }
    }

    /// Sends `signal` to the harness process (not its group: only what a user's `kill` does); nothing once it
    /// was reaped (its pid may belong to another process by then).
    func send(_ signal: Int32) {
        guard ending == nil else { return }
        kill(pid, signal)
    }

    /// Waits at most `seconds` for the harness to end and reaps it; nil when it still runs.
    func wait(seconds: Double) -> Ending? {
        if let ending { return ending }
        let deadline = Deadline(seconds: seconds)
        repeat {
            var status: Int32 = 0
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid {
                // WIFEXITED / WEXITSTATUS / WTERMSIG spelled out: the C macros are not imported.
                let signal = status & 0x7f
                ending = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
                return ending
            }
            if done < 0 && errno != EINTR { return nil }
            usleep(2_000)
        } while !deadline.passed
        return nil
    }

    /// Waits for the end; a harness still running after `seconds` is killed and the test fails with `what`.
    func finish(within seconds: Double, _ what: String) throws -> Ending {
        if let ending = wait(seconds: seconds) { return ending }
        send(SIGKILL)
        _ = wait(seconds: 10)
        throw FaultError("\(what): memharness still ran after \(seconds) s and was killed")
    }

    /// True while the process exists and has not ended (a zombie has ended).
    var isRunning: Bool { ending == nil && ProcessTable.state(of: pid).map { $0 != "Z" } == true }
}

/// A point in time `seconds` from now, on the monotonic clock.
struct Deadline {
    let end: UInt64

    init(seconds: Double) { end = Self.now + UInt64(max(0, seconds) * 1e9) }

    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }
    var passed: Bool { Self.now >= end }
    var secondsLeft: Double { passed ? 0 : Double(end - Self.now) / 1e9 }

    /// Calls `condition` every `interval` seconds until it holds (true) or the deadline passes (false).
    static func poll(seconds: Double, interval: Double = 0.002, _ condition: () -> Bool) -> Bool {
        let deadline = Deadline(seconds: seconds)
        while true {
            if condition() { return true }
            if deadline.passed { return false }
            usleep(UInt32(interval * 1e6))
        }
    }
}

/// A failure of the test's own machinery (not a finding about the harness).
struct FaultError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Calls `body` with a NULL-terminated array of C strings that live for the call.
func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
    let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { buffer in
        guard let base = buffer.baseAddress else { preconditionFailure("it holds at least the terminating NULL") }
        return body(base)
    }
}
