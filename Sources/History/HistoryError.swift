import FileIO
import HarnessModel

/// Why a history store could not be read or written, or a request on it could not be answered.
public enum HistoryError: Error, CustomStringConvertible, Sendable {
    /// The folder given as a run is not a finished report folder (wraps the reading error, which names the file).
    case notARun(ReportError)
    /// The store folder holds something that is not a history store.
    case notAStore(path: String, reason: String)
    /// The store was written by another version of memharness.
    case otherVersion(file: String, found: String, expected: String)
    /// A record of the store is damaged (truncated, hand-edited, of another format).
    case damagedRecord(file: String, reason: String)
    /// A file of the store could not be written; the store holds what it held before.
    case unwritable(path: String, reason: String)
    /// The SQLite index could not be built or read.
    case index(path: String, reason: String)
    /// A run named on the command line (a commit or a record id) is not in the store.
    case unknownRun(String, known: Int)
    /// A name that matches several runs.
    case ambiguousRun(String, matches: [String])

    public var description: String {
        switch self {
        case .notARun(let error): return "\(error)"
        case .notAStore(let path, let reason):
            return "\(path) is not a history store (\(reason)); give --store a new folder or one "
                + "`memharness history record` wrote"
        case .otherVersion(let file, let found, let expected):
            return "\(file): a history store of format '\(found)'; this memharness reads '\(expected)': record "
                + "into a new store with this version, or read it with the version that wrote it"
        case .damagedRecord(let file, let reason):
            return "\(file): damaged run record (\(reason)); remove the file and record its run again"
        case .unwritable(let path, let reason): return "\(path): \(reason); the store is unchanged"
        case .index(let path, let reason):
            return "\(path): \(reason); the index is a cache built from records/: delete it to have it rebuilt"
        case .unknownRun(let name, let known):
            return "no run in the store matches '\(name)' (\(known) runs); give a commit SHA (or its prefix) or a "
                + "record id as `memharness history show` lists them"
        case .ambiguousRun(let name, let matches):
            return "'\(name)' matches \(matches.count) runs (\(matches.prefix(5).joined(separator: ", "))); give more "
                + "digits"
        }
    }

    /// The exit status the command line gives this error: bad input is a usage error, a write failure an I/O one.
    public var exitStatus: ExitStatus {
        switch self {
        case .notARun(let error): return error.exitStatus
        case .unwritable, .index: return .ioError
        case .notAStore, .otherVersion, .damagedRecord, .unknownRun, .ambiguousRun: return .usage
        }
    }
}
