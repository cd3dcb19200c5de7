import CSystem
import Foundation

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// How a child process ended.
public enum Termination: Sendable, Hashable {
    /// It exited with this status.
    case exited(Int32)
    /// A signal killed it.
    case signaled(Int32)
}

/// What the kernel says about a child once it ended.
public struct ChildUsage: Sendable, Hashable {
    /// Its resident set high-water mark (`ru_maxrss`), bytes.
    public var peakRSSBytes: Int
    /// Its user plus system CPU time, nanoseconds.
    public var cpuNanoseconds: Int64
}

/// Why a child could not be started.
public struct SpawnError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var errno: Int32

    public var description: String {
        let reason: String
        switch errno {
        case ENOENT: reason = "no such file"
        case EACCES: reason = "not executable (permission denied)"
        case ENOEXEC: reason = "not an executable: neither a binary for this machine nor a script starting with #!"
        default: reason = String(cString: strerror(errno))
        }
        return "cannot start \(path): \(reason)"
    }
}

/// A child process started without Foundation's `Process`: it leads a process group of its own, dies
/// with the thread that started it (`PR_SET_PDEATHSIG`), is killed with everything it started when the
/// run is interrupted, and is waited for with a bound.
///
/// The thread that spawns a child must outlive it (the parent-death signal follows the thread, not the
/// process): the runner spawns and waits on one thread.
public struct ChildProcess: Sendable {
    public let pid: pid_t

    /// Starts `path` with `arguments` (argv[1...]) and `environment`; `stdout`/`stderr` are descriptors
    /// (nil: /dev/null); stdin is /dev/null.
    public static func spawn(
        path: String, arguments: [String], environment: [String: String], stdout: Int32? = nil, stderr: Int32? = nil,
        workingDirectory: String? = nil
    ) throws(SpawnError) -> ChildProcess {
        // Everything the child needs is built here, before the fork: the child may not allocate.
        let argv = CStringArray([path] + arguments)
        let envp = CStringArray(environment.map { "\($0.key)=\($0.value)" }.sorted())
        var pid: pid_t = 0
        let directory = CStringArray(workingDirectory.map { [$0] } ?? [])
        let status = argv.withPointers { argvPointer in
            envp.withPointers { envpPointer in
                directory.withPointers { directoryPointer in
                    path.withCString { pathPointer in
                        var request = memharness_spawn_request(
                            path: pathPointer, argv: argvPointer, envp: envpPointer, stdin_fd: -1,
                            stdout_fd: stdout ?? -1, stderr_fd: stderr ?? -1, die_with_parent: 1, new_process_group: 1,
                            working_directory: directoryPointer[0])
                        return memharness_spawn(&request, &pid)
                    }
                }
            }
        }
        guard status == 0 else { throw SpawnError(path: path, errno: errno) }
        // The interruption handler kills registered groups; a full table only means no kill on interruption,
        // which PR_SET_PDEATHSIG still covers when the runner then exits.
        _ = memharness_child_register(pid)
        return ChildProcess(pid: pid)
    }

    /// Waits for the child to end, at most `timeoutNanoseconds`; nil when it still runs.
    public func wait(timeoutNanoseconds: Int64) -> (termination: Termination, usage: ChildUsage)? {
        var result = memharness_wait_result()
        let status = memharness_wait(pid, timeoutNanoseconds, &result)
        guard status == 1 else { return nil }
        memharness_child_unregister(pid)
        let termination: Termination = result.exited == 1 ? .exited(result.status) : .signaled(result.signal)
        return (
            termination,
            ChildUsage(peakRSSBytes: result.max_rss_kib * 1024, cpuNanoseconds: result.user_ns + result.system_ns)
        )
    }

    /// Kills the child and everything it started (its process group) and waits for it: at most 10 s,
    /// which SIGKILL never needs unless the kernel is stuck; nil then.
    public func kill() -> (termination: Termination, usage: ChildUsage)? {
        _ = memharness_kill_group(pid, SIGKILL)
        return wait(timeoutNanoseconds: 10_000_000_000)
    }
}

/// NUL-terminated C strings and the NULL-terminated array of pointers to them, kept alive together.
private final class CStringArray: @unchecked Sendable {
    // Safety: the storage is written in `init` only and read while the caller holds the object.
    private let storage: [UnsafeMutablePointer<CChar>]

    init(_ strings: [String]) {
        storage = strings.map { string in
            let bytes = Array(string.utf8CString)
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
            pointer.initialize(from: bytes, count: bytes.count)
            return pointer
        }
    }

    deinit {
        for pointer in storage { pointer.deallocate() }
    }

    func withPointers<T>(_ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
        let pointers: [UnsafeMutablePointer<CChar>?] = storage + [nil]
        return pointers.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { preconditionFailure("it holds at least the terminating NULL") }
            return body(base)
        }
    }
}

/// The run's response to SIGINT, SIGTERM and SIGHUP: every running child group is killed at once, the
/// run stops before the next case, and it exits with 128 + the signal's number.
public enum Interruption {
    /// Installs the handlers (once per process, before the first case).
    public static func install() { memharness_interruption_install() }

    /// The signal that interrupted the run, if one did.
    public static var signal: Int32? {
        let value = memharness_interruption_signal()
        return value == 0 ? nil : value
    }
}
