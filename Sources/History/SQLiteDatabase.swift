import CSQLite

/// A SQLite connection of the history index: open, run statements, read rows. One thread uses it at a time
/// (the command that opened it); every failure is an error naming the database file.
final class SQLiteDatabase {
    private var handle: OpaquePointer?
    let path: String

    init(path: String, create: Bool) throws(HistoryError) {
        self.path = path
        let flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READWRITE
        let status = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK else {
            let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open (status \(status))"
            sqlite3_close(handle)
            handle = nil
            throw .index(path: path, reason: reason)
        }
    }

    deinit { sqlite3_close(handle) }

    /// Runs statements that return no rows.
    func execute(_ sql: String) throws(HistoryError) {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
            let reason = message.map { String(cString: $0) } ?? "failed"
            sqlite3_free(message)
            throw .index(path: path, reason: reason)
        }
    }

    func prepare(_ sql: String) throws(HistoryError) -> Statement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw .index(path: path, reason: String(cString: sqlite3_errmsg(handle)))
        }
        return Statement(statement, database: self)
    }

    var lastRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    var errorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// A prepared statement: bind, step, read columns, reset for the next row.
    final class Statement {
        private let statement: OpaquePointer
        private let database: SQLiteDatabase
        /// SQLite copies a bound text at once (SQLITE_TRANSIENT, which Swift cannot import as a macro).
        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

        init(_ statement: OpaquePointer, database: SQLiteDatabase) {
            self.statement = statement
            self.database = database
        }

        deinit { sqlite3_finalize(statement) }

        func bind(_ values: [Value]) {
            sqlite3_reset(statement)
            for (offset, value) in values.enumerated() {
                let index = Int32(offset + 1)
                switch value {
                case .text(let text): sqlite3_bind_text(statement, index, text, -1, Self.transient)
                case .integer(let integer): sqlite3_bind_int64(statement, index, integer)
                case .real(let real): sqlite3_bind_double(statement, index, real)
                }
            }
        }

        /// Steps once: true when a row is ready to read, false when done.
        func step() throws(HistoryError) -> Bool {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: return true
            case SQLITE_DONE: return false
            default: throw .index(path: database.path, reason: database.errorMessage)
            }
        }

        /// Binds `values` and runs the statement to its end.
        func run(_ values: [Value]) throws(HistoryError) {
            bind(values)
            while try step() {}
        }

        func text(_ column: Int32) -> String {
            sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
        }
        func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        func real(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    }

    enum Value {
        case text(String)
        case integer(Int64)
        case real(Double)
    }
}
