#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: child processes are waited for with Linux's pidfd")
#endif

/// Why a child process could not be started or waited for: the call that failed and its errno.
public enum ChildProcessError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The fork or the exec failed (`errno` from the child when the exec did: ENOENT, EACCES, ENOEXEC...).
    case cannotStart(path: String, errno: Int32)
    /// Waiting for the child failed (ECHILD: something else reaped it); it was killed with its group.
    case cannotWait(path: String, pid: Int32, errno: Int32)
    /// A pipe for a child's standard stream could not be made (EMFILE: too many open descriptors).
    case cannotMakePipe(errno: Int32)

    /// The system's text for the errno, without the path ("No such file or directory").
    public var reason: String {
        switch self {
        case .cannotStart(_, let errno), .cannotWait(_, _, let errno), .cannotMakePipe(let errno):
            return String(cString: strerror(errno))
        }
    }

    public var description: String {
        switch self {
        case .cannotStart(let path, let errno):
            let reason: String
            switch errno {
            case ENOENT: reason = "no such file; check the path, or give the full path of the executable"
            case EACCES: reason = "not executable (permission denied); chmod +x it, or run it through its interpreter"
            case ENOEXEC:
                reason = "not an executable: neither a binary for this machine nor a script starting with #!"
            default: reason = self.reason
            }
            return "cannot start \(path): \(reason)"
        case .cannotMakePipe:
            return "cannot make a pipe for a child's output: \(reason); close descriptors, or raise `ulimit -n`"
        case .cannotWait(let path, let pid, _):
            return "cannot wait for \(path) (pid \(pid)): \(reason); it was killed. Is another part of this process "
                + "reaping children (a SIGCHLD handler set to SIG_IGN, a waitpid(-1))?"
        }
    }
}
