import CSQLite

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

// Why the SQLite C API and not GRDB: these workloads are about what SQLite does with its files, so
// they need each knob in hand: when a checkpoint runs and in which mode, and its exact outcome
// (`sqlite3_wal_checkpoint_v2` reports frames in the log, frames copied back, and busy), the commit
// hook that counts WAL frames (`sqlite3_wal_hook`, the mechanism behind `wal_autocheckpoint`), which
// connection holds a read transaction open and for how long, `PRAGMA page_count` / `freelist_count`,
// `VACUUM` and `VACUUM INTO`. GRDB's pools run their own checkpoints and reader management, which is
// the very thing under study; the C API keeps the model free of a second policy layer.

/// The outcome of one `sqlite3_wal_checkpoint_v2` call.
public struct CheckpointResult: Sendable, Hashable {
    /// Frames in the WAL as SQLite reports them when the checkpoint returns (`pnLog`); a TRUNCATE
    /// checkpoint that succeeded has emptied the WAL and reports 0.
    public var logFrames: Int
    /// Frames of the WAL copied back into the database file (`pnCkpt`); 0 after a successful TRUNCATE.
    public var checkpointedFrames: Int
    /// True when SQLite answered `SQLITE_BUSY`: a FULL, RESTART or TRUNCATE checkpoint could not
    /// wait out a reader or writer (a PASSIVE one never reports busy, it just copies less).
    public var busy: Bool

    /// True when every frame of the WAL is back in the database file.
    public var isComplete: Bool { !busy && checkpointedFrames >= logFrames }
}

/// The checkpoint modes of `sqlite3_wal_checkpoint_v2`.
public enum CheckpointMode: String, Sendable, Hashable, CaseIterable {
    /// Copy what can be copied without waiting for anyone; what SQLite's automatic checkpoint does.
    case passive
    /// Wait for the writer and for readers of older snapshots, then copy everything.
    case full
    /// Like `full`, then wait until no reader uses the WAL so the next writer restarts it from the start.
    case restart
    /// Like `restart`, then truncate the WAL file to zero bytes (the only mode that shrinks it).
    case truncate

    var code: Int32 {
        switch self {
        case .passive: return SQLITE_CHECKPOINT_PASSIVE
        case .full: return SQLITE_CHECKPOINT_FULL
        case .restart: return SQLITE_CHECKPOINT_RESTART
        case .truncate: return SQLITE_CHECKPOINT_TRUNCATE
        }
    }
}

/// Figures of a database read from SQLite itself and from the file system.
public struct DatabaseFigures: Sendable, Hashable {
    /// `PRAGMA page_size`, bytes.
    public var pageSize: Int
    /// `PRAGMA page_count`: pages in the database as the connection sees it (WAL included).
    public var pageCount: Int
    /// `PRAGMA freelist_count`: pages in the file that hold no data.
    public var freePages: Int
    /// Size of the database file on disk, bytes (lags `pageCount` until a checkpoint copies the WAL back).
    public var databaseBytes: Int
    /// Size of the `-wal` file on disk, bytes (0 when it does not exist).
    public var walBytes: Int

    /// The database and its WAL on disk together, bytes: what the seed calls the file (a Realm
    /// file holds its versions in itself; SQLite keeps the newer ones in the WAL).
    public var fileBytes: Int { databaseBytes + walBytes }

    /// Bytes of pages that hold data: `(pageCount - freePages) * pageSize`.
    public var usedBytes: Int { (pageCount - freePages) * pageSize }
    /// Bytes of all pages: `pageCount * pageSize` (data plus free space).
    public var totalPageBytes: Int { pageCount * pageSize }
    /// Share of the pages that hold data, 0...1 (1 for an empty database).
    public var usedRatio: Double {
        // An empty database has no pages; call it fully used rather than divide by zero.
        pageCount > 0 ? Double(pageCount - freePages) / Double(pageCount) : 1
    }
}

/// Size of the file at `path` in bytes; 0 when it does not exist.
func fileBytes(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}

/// How a connection opens its database.
struct ConnectionOptions: Sendable, Hashable {
    /// true: `synchronous=NORMAL`, which in WAL mode flushes to disk at checkpoints only, as most apps
    /// run it. false: `synchronous=OFF`, no flushes: writes stay in the page cache, so timings measure
    /// SQLite's work rather than this machine's disk latency (which varies from run to run).
    var flushes = true
    /// Create a new file with `auto_vacuum=INCREMENTAL` (what `PRAGMA incremental_vacuum` needs).
    /// Set it only when creating the file: on an existing one it cannot change the mode, but
    /// asking rewrites the file's header (a WAL frame).
    var incrementalAutoVacuum = false
}

/// One SQLite connection, used by one thread at a time.
///
/// Not `Sendable`: each thread of a workload opens its own connection, as SQLite recommends for WAL
/// concurrency (one writer, readers on their own connections).
final class SQLiteConnection {
    /// The database file.
    let path: String
    private var handle: OpaquePointer?

    /// Opens (creating if needed) the database at `path` in WAL mode.
    ///
    /// - Parameters:
    ///   - busyTimeout: how long SQLite retries a lock before answering `SQLITE_BUSY`.
    ///   - options: file-system flushes, the auto-vacuum mode of a new file.
    init(path: String, busyTimeout: Duration = .seconds(2), options: ConnectionOptions = ConnectionOptions())
        throws(VersionPinningError)
    {
        self.path = path
        var handle: OpaquePointer?
        let status = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close_v2(handle)
            throw .sqlite(code: status, message: message, operation: "open", path: path)
        }
        self.handle = handle
        sqlite3_busy_timeout(handle, Int32(clamping: busyTimeout.nanoseconds / 1_000_000))
        // Before anything creates the file's first page: a new file takes its auto-vacuum mode from here.
        if options.incrementalAutoVacuum { try execute("PRAGMA auto_vacuum=INCREMENTAL") }
        // WAL: readers see a snapshot while one writer appends; the subject of these workloads.
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=" + (options.flushes ? "NORMAL" : "OFF"))
    }

    deinit {
        close()
    }

    /// Closes the connection; in WAL mode the last connection to close checkpoints and deletes the WAL.
    ///
    /// Every statement of this connection must have been released before, or closing is deferred.
    func close() {
        sqlite3_close_v2(handle)
        handle = nil
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(VersionPinningError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        if status != SQLITE_OK {
            throw .sqlite(
                code: status, message: message.map { String(cString: $0) } ?? errorMessage(status),
                operation: sql, path: path)
        }
    }

    /// Compiles `sql` into a statement bound to this connection.
    func prepare(_ sql: String) throws(VersionPinningError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else {
            throw .sqlite(code: status, message: errorMessage(status), operation: sql, path: path)
        }
        return SQLiteStatement(statement, connection: self, sql: sql)
    }

    /// The first column of the first row of `sql` as an integer (for `PRAGMA page_count` and friends).
    func integer(_ sql: String) throws(VersionPinningError) -> Int {
        try prepare(sql).scalar()
    }

    /// Page size, page count and free pages from SQLite, file sizes from the file system.
    func figures() throws(VersionPinningError) -> DatabaseFigures {
        try FigureReader(self).read()
    }

    /// Runs a checkpoint of every attached database in `mode`.
    ///
    /// `SQLITE_BUSY` is an outcome (`busy`), not an error: it is what a reader pinning the WAL causes.
    func checkpoint(_ mode: CheckpointMode) throws(VersionPinningError) -> CheckpointResult {
        var logFrames: Int32 = 0
        var checkpointedFrames: Int32 = 0
        let status = sqlite3_wal_checkpoint_v2(handle, nil, mode.code, &logFrames, &checkpointedFrames)
        guard status == SQLITE_OK || status == SQLITE_BUSY else {
            throw .sqlite(
                code: status, message: errorMessage(status), operation: "checkpoint (\(mode.rawValue))", path: path)
        }
        return CheckpointResult(
            logFrames: Int(logFrames), checkpointedFrames: Int(checkpointedFrames),
            busy: status == SQLITE_BUSY)
    }

    /// Calls `counter.frames = n` after every commit with the number of frames now in the WAL.
    ///
    /// This replaces SQLite's own automatic checkpoint (which is this same hook), so the caller decides
    /// when to checkpoint and sees each result. `counter` must outlive the connection.
    func countWALFrames(into counter: WALFrameCounter) {
        sqlite3_wal_hook(
            handle,
            { context, _, _, frames in
                if let context {
                    Unmanaged<WALFrameCounter>.fromOpaque(context).takeUnretainedValue().frames = Int(frames)
                }
                return SQLITE_OK
            }, Unmanaged.passUnretained(counter).toOpaque())
    }

    fileprivate func errorMessage(_ status: Int32) -> String {
        handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
    }
}

/// Reads `DatabaseFigures` through statements compiled once, for loops that read them every commit.
final class FigureReader {
    private let connection: SQLiteConnection
    private let pageSize: Int
    private let pageCount: SQLiteStatement
    private let freePages: SQLiteStatement

    init(_ connection: SQLiteConnection) throws(VersionPinningError) {
        self.connection = connection
        pageSize = try connection.integer("PRAGMA page_size")
        pageCount = try connection.prepare("PRAGMA page_count")
        freePages = try connection.prepare("PRAGMA freelist_count")
    }

    /// Page figures as of the connection's latest view, file sizes as on disk now.
    func read() throws(VersionPinningError) -> DatabaseFigures {
        DatabaseFigures(
            pageSize: pageSize, pageCount: try pageCount.scalar(), freePages: try freePages.scalar(),
            databaseBytes: fileBytes(connection.path), walBytes: fileBytes(connection.path + "-wal"))
    }
}

/// Where the WAL hook of a connection writes the frame count; lives on the connection's thread.
final class WALFrameCounter {
    /// Frames in the WAL after the last commit.
    var frames = 0
}

/// A compiled statement; finalized when released.
final class SQLiteStatement {
    private let statement: OpaquePointer
    // Kept so the connection outlives its statements (SQLite requires statements finalized first).
    private let connection: SQLiteConnection
    private let sql: String

    fileprivate init(_ statement: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.statement = statement
        self.connection = connection
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(statement)
    }

    /// Binds integers to the parameters `?1`, `?2`, ... in order, after resetting the statement.
    func bind(_ values: Int...) {
        sqlite3_reset(statement)
        for (index, value) in values.enumerated() {
            sqlite3_bind_int64(statement, Int32(index + 1), Int64(value))
        }
    }

    /// Advances to the next row; false when there are no more rows.
    @discardableResult
    func step() throws(VersionPinningError) -> Bool {
        let status = sqlite3_step(statement)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE:
            sqlite3_reset(statement)
            return false
        default:
            sqlite3_reset(statement)
            throw .sqlite(code: status, message: connection.errorMessage(status), operation: sql, path: connection.path)
        }
    }

    /// The first column of the first row, leaving the statement reset (so it holds no read transaction).
    func scalar() throws(VersionPinningError) -> Int {
        defer { sqlite3_reset(statement) }
        guard try step() else {
            throw .sqlite(code: SQLITE_DONE, message: "returned no row", operation: sql, path: connection.path)
        }
        return integer(at: 0)
    }

    /// Runs the statement to the end, ignoring rows.
    func run() throws(VersionPinningError) {
        while try step() {}
    }

    /// Column `index` of the current row as an integer.
    func integer(at index: Int32) -> Int {
        Int(sqlite3_column_int64(statement, index))
    }
}
