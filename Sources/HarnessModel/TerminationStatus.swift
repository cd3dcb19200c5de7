/// How a process ended: the one encoding of it, from a child's wait to a program's record in run.json.
public enum TerminationStatus: Sendable, Hashable {
    /// It exited with this status (0-255).
    case exited(Int32)
    /// This signal ended it (its number: 9 for SIGKILL).
    case signaled(Int32)

    /// It exited with status 0.
    public var isSuccess: Bool { self == .exited(0) }

    /// The status a shell shows for it: the exit status, or 128 + the signal's number.
    public var shellStatus: Int32 {
        switch self {
        case .exited(let status): return status
        case .signaled(let signal): return 128 + signal
        }
    }
}
