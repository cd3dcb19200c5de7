import CSystem
import Foundation
import HarnessModel

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Why a report folder could not be read or written.
public enum ReportError: Error, CustomStringConvertible, Sendable {
    /// A report file is missing or cannot be read (a usage error: the folder is not a report).
    case unreadable(path: String, reason: String)
    /// A report file is not what memharness writes (another version, damaged, hand-edited).
    case damaged(file: String, line: Int?, reason: String)
    /// Writing failed (a full disk, an I/O error, no permission); the previous report is intact.
    case unwritable(path: String, reason: String)
    /// Another run holds the output folder.
    case locked(path: String)
    /// The output folder exists and is not a report folder: replacing it would destroy something of the user's.
    case notAReportFolder(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "\(path): \(reason)"
        case .damaged(let file, let line, let reason): return "\(file)\(line.map { ":\($0)" } ?? ""): \(reason)"
        case .unwritable(let path, let reason): return "\(path): \(reason); the previous report is intact"
        case .notAReportFolder(let path, let reason):
            return "\(path) is not a report folder (\(reason)); memharness replaces its output folder as a whole, "
                + "so give --out a new folder or one it wrote before"
        case .locked(let path):
            return "\(path) is being written by another memharness run; wait for it or choose another --out"
        }
    }

    /// The exit status the command line gives this error.
    public var exitStatus: ExitStatus {
        switch self {
        case .unreadable, .damaged, .notAReportFolder: return .usage
        case .unwritable: return .ioError
        case .locked: return .locked
        }
    }

    /// A decoding error in words, with the path of the bad value.
    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .dataCorrupted(let context): return "bad value at \(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context): return "missing '\(key.stringValue)' at \(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "unexpected value at \(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

/// A report folder on disk: written as one transaction, read back from its record.
///
/// A run writes every file into a temporary sibling folder and then exchanges it with the old folder
/// in one atomic rename, so the folder always holds one complete run, old or new, whatever happens to
/// the process; a lock on the folder keeps two runs from writing it at once.
public enum ReportFolder {
    /// Reads the record of the report folder `directory`.
    public static func read(_ directory: String) throws(ReportError) -> RunRecord {
        let path = "\(directory)/run.json"
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw .unreadable(path: path, reason: "no run.json here; expected a folder written by `memharness run`")
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .unreadable(path: path, reason: "not a regular file") }
        guard Int(status.st_size) <= RecordCodec.maximumFileBytes else {
            throw .unreadable(path: path, reason: "larger than \(Units.formatBytes(RecordCodec.maximumFileBytes))")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadable(path: path, reason: "cannot read it: \(String(cString: strerror(errno)))")
        }
        return try RecordCodec.decode(data, file: path)
    }

    /// Where this process stages the new folder (or file) `name` before it moves into place: a hidden
    /// sibling named with the process id, so a staging left by a killed run is recognised and removed.
    public static func stagingName(of name: String) -> String { ".\(name).new-\(getpid())" }

    /// The staging folder of `directory` for this process.
    public static func stagingPath(for directory: String) -> String {
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        return target.deletingLastPathComponent().appendingPathComponent(stagingName(of: target.lastPathComponent)).path
    }

    /// The lock file of `directory`: a hidden sibling.
    public static func lockPath(for directory: String) -> String {
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        return target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).lock").path
    }

    /// The files a report folder may hold: a folder with anything else is not replaced (it is the user's).
    public static let ownEntries: Set<String> = [
        "run.json", "report.md", "summary.csv", "samples.csv", "sweep.csv", "charts", "stacks",
    ]

    /// Checks that `directory` may be replaced by a report: it does not exist, or it is an empty folder
    /// or a report folder (a `run.json` and only the files a report has). Anything else (a file, a device,
    /// a link, a folder of the user's) is refused: the run replaces its output folder as a whole.
    public static func checkReplaceable(_ directory: String) throws(ReportError) {
        var status = stat()
        guard lstat(directory, &status) == 0 else {
            guard errno == ENOENT else { throw .unwritable(path: directory, reason: String(cString: strerror(errno))) }
            return
        }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFDIR else {
            let what =
                kind == S_IFLNK ? "a symbolic link" : kind == S_IFREG ? "a file" : "a device or other special file"
            throw .notAReportFolder(path: directory, reason: "it is \(what)")
        }
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
            !$0.hasPrefix(".")
        }
        guard entries.isEmpty || entries.contains("run.json") else {
            throw .notAReportFolder(path: directory, reason: "it holds \(entries.count) entries and no run.json")
        }
        if let foreign = entries.sorted().first(where: { !ownEntries.contains($0) }) {
            throw .notAReportFolder(path: directory, reason: "it holds '\(foreign)', which no report has")
        }
    }

    /// Writes `files` (relative path → contents) as the folder `directory`, replacing what was there
    /// in one step. On failure nothing of the new run is left and the old folder is untouched.
    ///
    /// `proceed` is asked before each file and once more just before the new folder moves into place; when it
    /// says no (the run was interrupted), the new files are removed, the old folder is untouched and the
    /// result is false. True: the new folder is in place.
    @discardableResult
    public static func write(
        _ files: [(path: String, data: Data)], to directory: String, proceed: () -> Bool = { true }
    ) throws(ReportError) -> Bool {
        try checkReplaceable(directory)
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        let parent = target.deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(path: parent, reason: "cannot create the folder: \(error.localizedDescription)")
        }
        let staging = stagingPath(for: directory)
        removeTree(staging)
        do {
            for (path, data) in files {
                guard proceed() else {
                    removeTree(staging)
                    return false
                }
                try writeFile(data, to: "\(staging)/\(path)")
            }
            guard proceed() else {
                removeTree(staging)
                return false
            }
            try install(staging, as: target.path)
            return true
        } catch {
            removeTree(staging)
            throw error
        }
    }

    /// Moves the finished folder `staging` into place as `target`, exchanging it with the old one.
    static func install(_ staging: String, as target: String) throws(ReportError) {
        if memharness_rename_exchange(staging, target) == 0 {
            // `staging` now holds the previous run: it is no longer needed.
            removeTree(staging)
        } else if errno == ENOENT, rename(staging, target) == 0 {
            return
        } else {
            throw .unwritable(
                path: target, reason: "cannot move the new report into place: \(String(cString: strerror(errno)))")
        }
    }

    /// Writes one file, creating its folders; a short write or a failed close (ENOSPC shows there) is an error.
    public static func writeFile(_ data: Data, to path: String) throws(ReportError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(path: folder, reason: "cannot create the folder: \(error.localizedDescription)")
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
        var failure: Int32 = 0
        data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }  // nothing to write
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    failure = written < 0 ? errno : ENOSPC
                    return
                }
                offset += written
            }
        }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure != 0 { throw .unwritable(path: path, reason: String(cString: strerror(failure))) }
    }

    /// Removes a folder tree of our own (a staging folder); a failure leaves a hidden dot-folder, which
    /// the next run into the same folder removes.
    static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Removes staging folders that runs killed while writing left beside `directory` (their process is gone).
    public static func removeStaleStaging(beside directory: String) {
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        let parent = target.deletingLastPathComponent().path
        let prefix = ".\(target.lastPathComponent).new-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            // kill(pid, 0) fails with ESRCH when no such process exists: its folder is an orphan.
            if kill(pid, 0) != 0 && errno == ESRCH { removeTree("\(parent)/\(name)") }
        }
    }
}

/// An exclusive lock on a report folder for the length of a run: a second run into the same folder
/// fails at once instead of losing one of the two reports.
///
/// The lock is `flock` on a hidden sibling file (`.NAME.lock`), which the kernel releases when the
/// process ends however it ends; the file is removed when the lock is released.
public final class ReportFolderLock: Sendable {
    private let descriptor: Int32
    private let path: String

    /// Takes the lock of `directory`, or throws `.locked` when another process holds it (and
    /// `.notAReportFolder` when the folder may not be replaced, before anything is created beside it).
    public init(_ directory: String) throws(ReportError) {
        try ReportFolder.checkReplaceable(directory)
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        let parent = target.deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(path: parent, reason: "cannot create the folder: \(error.localizedDescription)")
        }
        path = ReportFolder.lockPath(for: directory)
        while true {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                throw .locked(path: directory)
            }
            // The holder before us may have removed the file after we opened it: then our lock is on a
            // file nobody else will open. Lock the file that is there now instead.
            var held = stat()
            var current = stat()
            if fstat(fd, &held) == 0, stat(path, &current) == 0, held.st_ino == current.st_ino,
                held.st_dev == current.st_dev
            {
                descriptor = fd
                return
            }
            close(fd)
        }
    }

    deinit {
        // Unlink while holding the lock, so no one can lock the old file after we let go.
        unlink(path)
        close(descriptor)
    }
}

extension ReportFolder {
    /// Replaces the single file `path` (a JUnit or JSON output) through a temporary sibling and a rename.
    public static func replaceFile(_ data: Data, at path: String) throws(ReportError) {
        let url = URL(fileURLWithPath: path)
        let staging = url.deletingLastPathComponent().appendingPathComponent(
            stagingName(of: url.lastPathComponent)
        ).path
        try writeFile(data, to: staging)
        guard rename(staging, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(staging)
            throw .unwritable(path: path, reason: reason)
        }
    }
}
