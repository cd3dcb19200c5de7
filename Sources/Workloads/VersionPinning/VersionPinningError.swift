import CSQLite

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

/// Why a version-pinning or compaction case could not run.
public enum VersionPinningError: Error, CustomStringConvertible, Sendable, Hashable {
    /// SQLite refused `operation` (a statement, `open`, a checkpoint) on the database at `path`.
    case sqlite(code: Int32, message: String, operation: String, path: String)
    /// The compacted copy's destination exists already (like `writeCopy(toFile:)`, it must not).
    case copyDestinationExists(path: String)
    /// A file-system call failed (`errno` is the C error number).
    case fileSystem(operation: String, path: String, errno: Int32)
    /// A writer or reader thread ended without reporting (it cannot today; kept so a bug is not silent).
    case workerVanished(String)

    public var description: String {
        switch self {
        case .sqlite(let code, let message, let operation, let path):
            return "\(path): SQLite error \(code) (\(message)) during '\(operation)'" + Self.hint(code)
        case .copyDestinationExists(let path):
            return
                "\(path): the compacted copy's destination already exists; remove it or pick another scratch directory"
        case .fileSystem(let operation, let path, let number):
            return "\(path): \(operation) failed: \(String(cString: strerror(number)))"
                + "; check that the scratch directory exists, is writable and has free space"
        case .workerVanished(let name):
            return "the \(name) thread ended without a report; this is a bug in the workload, please report it"
        }
    }

    private static func hint(_ code: Int32) -> String {
        switch code & 0xFF {
        case SQLITE_FULL:
            return "; the disk is full: free space, or shorten the burst / lower writeRate or the fill size"
        case SQLITE_CANTOPEN: return "; check that the scratch directory exists and is writable"
        case SQLITE_BUSY, SQLITE_LOCKED:
            return "; another connection holds a lock: a workload bug, or a second process uses the file"
        default: return ""
        }
    }
}
