/// The exit statuses of every memharness command; their wording for `--help` is the command line's.
public enum ExitStatus: Sendable, Hashable {
    /// Every case completed and every check passed.
    case ok
    /// A case crashed, failed, timed out or could not be measured.
    case caseFailed
    /// A finding: a threshold breached, a regression against the baseline, an unexpected leak.
    case finding
    /// Bad usage or bad input data (an option, a scenario, a baseline, a report folder), before any work.
    case usage
    /// Reading or writing a file failed (a full disk, an I/O error); the previous report is intact.
    case ioError
    /// Another run holds the output folder.
    case locked
    /// Stopped by a signal (SIGINT, SIGTERM, SIGHUP): 128 + the signal's number, as shells report it.
    case interrupted(signal: Int32)

    /// The process exit code.
    public var code: Int32 {
        switch self {
        case .ok: return 0
        case .caseFailed: return 1
        case .finding: return 2
        case .usage: return 64
        case .ioError: return 74
        case .locked: return 75
        case .interrupted(let signal): return 128 + signal
        }
    }
}
