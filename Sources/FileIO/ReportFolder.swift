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
    /// A report file is not what memharness writes (another version, damaged, hand-edited), with the
    /// place of the problem when known.
    case damaged(file: String, line: Int?, column: Int? = nil, reason: String)
    /// Writing failed (a full disk, an I/O error, no permission); the previous report is intact.
    case unwritable(path: String, reason: String)
    /// Another run holds the output folder.
    case locked(path: String)
    /// The output folder exists and is not a report folder: replacing it would destroy something of the user's.
    case notAReportFolder(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "\(path): \(reason)"
        case .damaged(let file, let line, let column, let reason):
            return "\(file)\(line.map { ":\($0)" } ?? "")\(line != nil ? column.map { ":\($0)" } ?? "" : ""): \(reason)"
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

    /// A decoding error in words, with the path of the bad value (`report.scenarios[0].cases`).
    package static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let text = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.isEmpty ? "the top level" : String(text.drop { $0 == "." })
        }
        switch error {
        case .dataCorrupted(let context):
            let reason = (context.underlyingError as? SampleSeries.ColumnProblem).map(describe)
            return "bad value at \(path(context)): \(reason ?? context.debugDescription)"
        case .keyNotFound(let key, let context): return "missing '\(key.stringValue)' in \(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "unexpected value at \(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    /// A record's sample columns' problem in words.
    static func describe(_ problem: SampleSeries.ColumnProblem) -> String {
        switch problem {
        case .columnsDisagree: return "the sample columns disagree (lengths, gauge names or phase indices)"
        case .notAWholeNumber(let field): return "'\(field)' is not a whole number within ±2^53"
        }
    }

    /// A decoding error of the JSON text `bytes` of `file`, at the line of the value it is about.
    static func damaged(_ error: DecodingError, file: String, bytes: [UInt8], prefix: String = "") -> ReportError {
        let path: [any CodingKey]
        switch error {
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context),
            .keyNotFound(_, let context):
            path = context.codingPath
        @unknown default:
            path = []
        }
        let place = JSONText.place(of: path, in: bytes)
        return .damaged(file: file, line: place?.line, column: place?.column, reason: prefix + describe(error))
    }

    /// A syntax problem of a JSON file at its place.
    static func damaged(_ problem: JSONText.Problem, file: String, prefix: String = "") -> ReportError {
        .damaged(file: file, line: problem.line, column: problem.column, reason: prefix + problem.message)
    }
}

/// A report folder on disk: written as one transaction, read back from its record.
///
/// A run writes every file into a temporary sibling folder and then exchanges it with the old folder
/// in one atomic rename, so the folder always holds one complete run, old or new, whatever happens to
/// the process; a lock on the folder keeps two runs from writing it at once.
public enum ReportFolder {
    /// Reads the record of the report folder `directory`: `run.json`, a regular file of at most
    /// `RecordCodec.maximumFileBytes`, UTF-8, checked as `RecordCodec.decode` says.
    public static func read(_ directory: String) throws(ReportError) -> RunRecord {
        let path = "\(directory)/run.json"
        let text: String
        do {
            text = try InputFile.readText(path, maximumBytes: RecordCodec.maximumFileBytes, what: "run.json")
        } catch {
            var status = stat()
            guard stat(directory, &status) == 0 else {
                throw .unreadable(
                    path: directory, reason: "no such folder; expected a report folder written by `memharness run`")
            }
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw .unreadable(
                    path: directory, reason: "not a folder; expected a report folder written by `memharness run`")
            }
            if lstat(path, &status) != 0 {
                throw .unreadable(path: path, reason: "no run.json here; expected a folder written by `memharness run`")
            }
            throw .unreadable(path: path, reason: error.reason)
        }
        return try RecordCodec.decode(Data(text.utf8), file: path)
    }

    /// The files a report folder may hold: a folder with anything else is not replaced (it is the user's).
    public static let ownEntries: Set<String> = [
        "run.json", "report.md", "report.html", "summary.csv", "instrumented.csv", "samples.csv", "sweep.csv", "charts",
        "stacks", "heap",
    ]

    /// A kind of folder memharness replaces as a whole: the file that marks it as one and what it may hold.
    public struct FolderKind: Sendable {
        public var marker: String
        public var entries: Set<String>
        public init(marker: String, entries: Set<String>) {
            self.marker = marker
            self.entries = entries
        }
        /// A run's report folder.
        public static let report = FolderKind(marker: "run.json", entries: ownEntries)
    }

    /// Checks that `directory` may be replaced by a report: it does not exist, or it is an empty folder
    /// or a report folder (a `run.json` and only the files a report has). Anything else (a file, a device,
    /// a link, a folder of the user's) is refused: the run replaces its output folder as a whole. `kind` names
    /// another kind of folder memharness writes (a history report): its marker file and the entries it may hold.
    public static func checkReplaceable(_ directory: String, kind folder: FolderKind = .report) throws(ReportError) {
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
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            // A folder that cannot be listed is not taken for an empty one: it may hold the user's files.
            throw .unwritable(
                path: directory,
                reason: "cannot list the folder to check that it is a report folder (\(error.localizedDescription))")
        }
        let entries = names.filter { !$0.hasPrefix(".") }
        guard entries.isEmpty || entries.contains(folder.marker) else {
            throw .notAReportFolder(
                path: directory, reason: "it holds \(entries.count) entries and no \(folder.marker)")
        }
        if let foreign = entries.sorted().first(where: { !folder.entries.contains($0) }) {
            throw .notAReportFolder(path: directory, reason: "it holds '\(foreign)', which no report has")
        }
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

    /// Writes `files` (relative path → contents) as the folder `directory`, replacing what was there
    /// in one step. On failure nothing of the new run is left and the old folder is untouched.
    public static func write(
        _ files: [(path: String, data: Data)], to directory: String, kind: FolderKind = .report
    ) throws(ReportError) {
        try write(to: directory, kind: kind) { emit throws(ReportError) in
            for (path, data) in files { try emit(path, data) }
        }
    }

    /// Writes the files `produce` hands to its `emit` as the folder `directory`, each as soon as it is
    /// made (a large report is never held whole), then replaces what was there in one step. On failure
    /// nothing of the new run is left and the old folder is untouched.
    ///
    /// `proceed` is asked before each file and once more just before the new folder moves into place; when it
    /// says no (the run was interrupted), the new files are removed, the old folder is untouched and the
    /// result is false. True: the new folder is in place.
    @discardableResult
    public static func write(
        to directory: String, kind: FolderKind = .report, proceed: @escaping () -> Bool = { true },
        _ produce: (_ emit: (_ path: String, _ data: Data) throws(ReportError) -> Void) throws(ReportError) -> Void
    ) throws(ReportError) -> Bool {
        try checkReplaceable(directory, kind: kind)
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        let parent = target.deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(path: parent, reason: "cannot create the folder: \(error.localizedDescription)")
        }
        let staging = stagingPath(for: directory)
        removeTree(staging)
        var current: OpenFile?
        do {
            // Consecutive pieces of one path are one file, written as they come.
            var stopped = false
            try produce { path, data throws(ReportError) in
                let destination = "\(staging)/\(path)"
                if let file = current, file.path != destination {
                    current = nil
                    try file.close()
                }
                if stopped { return }
                if current == nil {
                    guard proceed() else {
                        stopped = true
                        return
                    }
                    current = try OpenFile(creating: destination)
                }
                try current?.append(data)
            }
            let last = current
            current = nil
            try last?.close()
            guard !stopped, proceed() else {
                removeTree(staging)
                return false
            }
            try install(staging, as: target.path)
            return true
        } catch {
            // A descriptor left open by the failure is closed here (its error no longer matters).
            current?.abandon()
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
        let file = try OpenFile(creating: path)
        do {
            try file.append(data)
        } catch {
            file.abandon()
            throw error
        }
        try file.close()
    }

    /// Removes a folder tree of our own (a staging folder); a failure leaves a hidden dot-folder, which
    /// the next run into the same folder removes.
    static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)  // ignored on purpose: see above
    }

    /// Removes staging folders that runs killed while writing left beside `directory` (their process is gone).
    public static func removeStaleStaging(beside directory: String) {
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        let parent = target.deletingLastPathComponent().path
        let prefix = ".\(target.lastPathComponent).new-"
        // Cleanup only: an unlistable parent has no staging this process could remove, and writing there fails
        // with its own error.
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

/// A file being written: created with its folders, appended to, closed with its errors checked.
struct OpenFile {
    let path: String
    let descriptor: Int32

    init(creating path: String) throws(ReportError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(path: folder, reason: "cannot create the folder: \(error.localizedDescription)")
        }
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
    }

    /// Writes every byte of `data`; a short write (a full disk) or an error is an error.
    func append(_ data: Data) throws(ReportError) {
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
        if failure != 0 { throw .unwritable(path: path, reason: String(cString: strerror(failure))) }
    }

    /// Closes the file after a failure that already decides the outcome: its own error no longer matters.
    func abandon() {
        Glibc.close(descriptor)
    }

    /// Closes the file; a failed close (where NFS and some full disks report) is an error.
    func close() throws(ReportError) {
        guard Glibc.close(descriptor) == 0 else {
            throw .unwritable(path: path, reason: String(cString: strerror(errno)))
        }
    }
}
