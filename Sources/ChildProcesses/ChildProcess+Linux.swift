import CSystem
import HarnessModel

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: child processes are waited for with Linux's pidfd")
#endif

/// What the kernel says about a child once it ended.
public struct ChildUsage: Sendable, Hashable {
    /// Its resident set high-water mark (`ru_maxrss`), bytes.
    public var peakRSSBytes: Int
    /// Its user plus system CPU time, nanoseconds.
    public var cpuNanoseconds: Int64
}

/// A child that ended and was reaped: how it ended and what it used.
public struct ChildEnd: Sendable, Hashable {
    public var termination: TerminationStatus
    public var usage: ChildUsage
}

/// How a bounded wait for a child came out.
public enum BoundedWait: Sendable, Hashable {
    /// The child ended within the bound.
    case ended(ChildEnd)
    /// The bound was hit: the child and its group were killed; `killed` is its end once reaped, nil when even
    /// SIGKILL did not end it within `ChildProcess.killWaitNanoseconds` (a stuck kernel).
    case timedOut(killed: ChildEnd?)
}

extension BoundedWait {
    /// The child's end when it ended within the bound; nil when it was killed at it.
    public var endedWithinBound: ChildEnd? {
        if case .ended(let end) = self { return end }
        return nil
    }

    /// What the child used, whether it ended or was killed; nil when a killed child was not reaped.
    public var usage: ChildUsage? {
        switch self {
        case .ended(let end): return end.usage
        case .timedOut(let killed): return killed?.usage
        }
    }
}

/// A child process: the one way memharness starts one (case processes, external programs, symbolizing
/// tools, test replicas).
///
/// It leads a process group of its own, starts with default signal dispositions and no signal blocked,
/// dies with the thread that started it (`PR_SET_PDEATHSIG`), is registered so that an interruption of
/// the run kills its group (`memharness_child_register`), and is waited for without polling (pidfd) with
/// a bound. Once it ends, what it started that is still in its group is killed before it is reaped, so
/// nothing it started outlives it.
///
/// The thread that spawns a child must outlive it (the parent-death signal follows the thread, not the
/// process): spawn and wait on one thread.
public struct ChildProcess: Sendable {
    /// How long a killed child is waited for: SIGKILL ends a process at once unless the kernel is stuck.
    /// Past it the child is not reaped here; the parent-death signal and this process's exit still end it.
    public static let killWaitNanoseconds: Int64 = 10_000_000_000

    /// Its process id, which is also its process group's.
    public let pid: pid_t
    /// The executable it runs, for errors.
    public let path: String

    /// Starts `path` (no PATH search) with `arguments` (argv[1...]) and `environment`. The standard streams
    /// are descriptors of this process, duplicated into the child (nil: /dev/null); the caller keeps and
    /// closes its own. `workingDirectory` nil: this process's.
    public static func spawn(
        path: String, arguments: [String], environment: [String: String], stdin: Int32? = nil,
        stdout: Int32? = nil, stderr: Int32? = nil, workingDirectory: String? = nil
    ) throws(ChildProcessError) -> ChildProcess {
        // Everything the child needs is built here, before the fork: the child may not allocate.
        let argv = CStringArray([path] + arguments)
        let envp = CStringArray(environment.map { "\($0.key)=\($0.value)" }.sorted())
        let directory = CStringArray(workingDirectory.map { [$0] } ?? [])
        var pid: pid_t = 0
        let status = argv.withPointers { argvPointer in
            envp.withPointers { envpPointer in
                directory.withPointers { directoryPointer in
                    path.withCString { pathPointer in
                        var request = memharness_spawn_request(
                            path: pathPointer, argv: argvPointer, envp: envpPointer, stdin_fd: stdin ?? -1,
                            stdout_fd: stdout ?? -1, stderr_fd: stderr ?? -1, die_with_parent: 1, new_process_group: 1,
                            working_directory: directoryPointer[0])
                        return memharness_spawn(&request, &pid)
                    }
                }
            }
        }
        guard status == 0 else { throw .cannotStart(path: path, errno: errno) }
        // The interruption handler kills registered groups; a full table (256) only means no kill on
        // interruption, which PR_SET_PDEATHSIG still covers when this process then exits.
        _ = memharness_child_register(pid)
        return ChildProcess(pid: pid, path: path)
    }

    /// Waits for the child to end, at most `timeoutNanoseconds` (0: only looks); nil when it still runs.
    public func wait(timeoutNanoseconds: Int64) throws(ChildProcessError) -> ChildEnd? {
        var result = memharness_wait_result()
        let status = memharness_wait(pid, max(timeoutNanoseconds, 0), &result)
        if status == 0 { return nil }
        memharness_child_unregister(pid)
        guard status == 1 else { throw .cannotWait(path: path, pid: pid, errno: errno) }
        return ChildEnd(
            termination: result.exited == 1 ? .exited(result.status) : .signaled(result.signal),
            usage: ChildUsage(
                peakRSSBytes: result.max_rss_kib * 1024, cpuNanoseconds: result.user_ns + result.system_ns))
    }

    /// Waits for the child at most `timeoutNanoseconds`; past that kills it with its group and reaps it
    /// (at most `killWaitNanoseconds`). A failed wait kills it too, then throws.
    public func wait(upTo timeoutNanoseconds: Int64) throws(ChildProcessError) -> BoundedWait {
        let ended: ChildEnd?
        do {
            ended = try wait(timeoutNanoseconds: timeoutNanoseconds)
        } catch {
            _ = kill()
            throw error
        }
        if let ended { return .ended(ended) }
        return .timedOut(killed: kill())
    }

    /// Kills the child and everything in its process group (SIGKILL) and reaps it: nil when it does not end
    /// within `killWaitNanoseconds`, or cannot be waited for.
    @discardableResult
    public func kill() -> ChildEnd? {
        _ = memharness_kill_group(pid, SIGKILL)  // the group is the child's own: nothing else is reached
        return (try? wait(timeoutNanoseconds: Self.killWaitNanoseconds)) ?? nil
    }

    /// A pipe for a child's standard stream: both ends close on exec, so a child started meanwhile by another
    /// thread does not hold the write end open. Pass `write` as the stream, then close it; read `read` to its end.
    public static func pipe() throws(ChildProcessError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard memharness_pipe(&ends) == 0 else { throw .cannotMakePipe(errno: errno) }
        return (ends[0], ends[1])
    }

    /// Sends `signal` to the child alone (not its group), as a user's `kill -INT PID` would.
    public func send(_ signal: Int32) { _ = Glibc.kill(pid, signal) }
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
