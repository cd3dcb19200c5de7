import Foundation
import HarnessModel

#if os(Linux)
    import Glibc
#endif

/// One run of a history as the index lists it, in history order.
public struct HistoryRun: Sendable, Hashable {
    /// The record's id (its file name in records/).
    public var id: String
    public var provenance: Provenance
    /// When the run finished, ISO 8601 UTC.
    public var runAt: String
}

/// A figure's values over a history: one point per run that measured it, in history order.
public struct HistorySeries: Sendable, Hashable {
    public var key: SeriesKey
    public var isBytes: Bool
    /// True when the scenario gated on the figure in any run.
    public var gated: Bool
    /// Positions in `HistoryTable.runs` of the runs that measured the figure, ascending.
    public var runIndices: [Int]
    /// The medians, one per run in `runIndices`.
    public var values: [Double]
}

/// What the index holds, read at once: the runs in history order and every series.
public struct HistoryTable: Sendable, Hashable {
    /// Runs sorted by author time, then run time, commit and id: the same order from any copy of the records.
    public var runs: [HistoryRun]
    /// Series sorted by key.
    public var series: [HistorySeries]
}

/// Which runs a history answer is about.
public struct RunFilter: Sendable, Hashable {
    public var branch: String?
    public var machine: String?
    public init(branch: String? = nil, machine: String? = nil) {
        self.branch = branch
        self.machine = machine
    }
}

/// The SQLite index of a store: a cache of its records for fast reading, built from them and brought up to
/// date on every use: records it lacks are added; when it lists a record that is gone, cannot be read, or is
/// of another format, it is rebuilt from scratch into a temporary file renamed over it.
public enum HistoryIndex {
    static let format = "memharness-history-index/1"

    /// How `sync` found the index.
    public struct Sync: Sendable, Hashable {
        /// Records added to the index.
        public var added: Int
        /// True when the index was built from scratch (missing, stale or damaged).
        public var rebuilt: Bool
    }

    /// Brings the index of `store` up to date with its records.
    @discardableResult
    public static func sync(_ store: HistoryStore) throws(HistoryError) -> Sync {
        let ids = try store.recordIDs()
        if let database = try? SQLiteDatabase(path: store.indexPath, create: false),
            let indexed = try? indexedIDs(database)
        {
            let known = Set(ids)
            if indexed.isSubset(of: known) {
                let missing = ids.filter { !indexed.contains($0) }
                if missing.isEmpty { return Sync(added: 0, rebuilt: false) }
                try insert(missing, from: store, into: database)
                return Sync(added: missing.count, rebuilt: false)
            }
        }
        try rebuild(store, ids: ids)
        return Sync(added: ids.count, rebuilt: true)
    }

    private static func indexedIDs(_ database: SQLiteDatabase) throws(HistoryError) -> Set<String> {
        let meta = try database.prepare("SELECT value FROM meta WHERE key = 'format'")
        guard try meta.step(), meta.text(0) == format else {
            throw .index(path: database.path, reason: "another format")
        }
        let statement = try database.prepare("SELECT id FROM runs")
        var ids = Set<String>()
        while try statement.step() { ids.insert(statement.text(0)) }
        return ids
    }

    private static func rebuild(_ store: HistoryStore, ids: [String]) throws(HistoryError) {
        let staging = "\(store.path)/.index.sqlite.new-\(getpid())"
        unlink(staging)
        do {
            let database = try SQLiteDatabase(path: staging, create: true)
            // The file is renamed into place only once whole: it needs no journal of its own.
            try database.execute(
                """
                PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
                CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
                INSERT INTO meta VALUES ('format', '\(format)');
                CREATE TABLE runs(id TEXT PRIMARY KEY, commit_sha TEXT, branch TEXT, time TEXT, machine TEXT,
                    run_at TEXT);
                CREATE TABLE series(scenario TEXT, strategy TEXT, figure TEXT, is_bytes INTEGER,
                    UNIQUE(scenario, strategy, figure));
                CREATE TABLE figures(run INTEGER, series INTEGER, value REAL, repetitions INTEGER, gated INTEGER);
                """)
            try insert(ids, from: store, into: database)
        } catch {
            unlink(staging)
            throw error
        }
        guard rename(staging, store.indexPath) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(staging)
            throw .index(path: store.indexPath, reason: "cannot move the rebuilt index into place: \(reason)")
        }
    }

    /// Adds the records `ids` in one transaction: all of them or, on a failure, none.
    private static func insert(_ ids: [String], from store: HistoryStore, into database: SQLiteDatabase)
        throws(HistoryError)
    {
        try database.execute("BEGIN IMMEDIATE")
        do {
            let run = try database.prepare("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)")
            let figure = try database.prepare("INSERT INTO figures VALUES (?, ?, ?, ?, ?)")
            let newSeries = try database.prepare("INSERT INTO series VALUES (?, ?, ?, ?)")
            var series = try seriesIDs(database)
            for id in ids {
                let record = try store.record(id)
                let p = record.provenance
                try run.run([
                    .text(id), .text(p.commit), .text(p.branch), .text(p.time), .text(p.machine), .text(record.runAt),
                ])
                let runID = database.lastRowID
                for entry in record.figures {
                    let seriesID: Int64
                    if let known = series[entry.key] {
                        seriesID = known
                    } else {
                        let key = entry.key
                        try newSeries.run([
                            .text(key.scenario), .text(key.strategy), .text(key.figure),
                            .integer(entry.isBytes ? 1 : 0),
                        ])
                        seriesID = database.lastRowID
                        series[key] = seriesID
                    }
                    try figure.run([
                        .integer(runID), .integer(seriesID), .real(entry.value), .integer(Int64(entry.repetitions)),
                        .integer(entry.gated ? 1 : 0),
                    ])
                }
            }
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }

    private static func seriesIDs(_ database: SQLiteDatabase) throws(HistoryError) -> [SeriesKey: Int64] {
        let statement = try database.prepare("SELECT rowid, scenario, strategy, figure FROM series")
        var result: [SeriesKey: Int64] = [:]
        while try statement.step() {
            let key = SeriesKey(scenario: statement.text(1), strategy: statement.text(2), figure: statement.text(3))
            result[key] = statement.integer(0)
        }
        return result
    }

    /// The store's runs (those `filter` keeps) and series, after `sync`.
    public static func table(_ store: HistoryStore, filter: RunFilter = RunFilter()) throws(HistoryError)
        -> HistoryTable
    {
        try sync(store)
        let database = try SQLiteDatabase(path: store.indexPath, create: false)
        let runs = try database.prepare(
            "SELECT rowid, id, commit_sha, branch, time, machine, run_at FROM runs "
                + "ORDER BY time, run_at, commit_sha, id")
        var order: [Int64: Int] = [:]
        var list: [HistoryRun] = []
        while try runs.step() {
            let provenance = Provenance(
                commit: runs.text(2), branch: runs.text(3), time: runs.text(4), machine: runs.text(5))
            if let branch = filter.branch, provenance.branch != branch { continue }
            if let machine = filter.machine, provenance.machine != machine { continue }
            order[runs.integer(0)] = list.count
            list.append(HistoryRun(id: runs.text(1), provenance: provenance, runAt: runs.text(6)))
        }
        return HistoryTable(runs: list, series: try series(database, order: order))
    }

    private static func series(_ database: SQLiteDatabase, order: [Int64: Int]) throws(HistoryError)
        -> [HistorySeries]
    {
        let keys = try database.prepare("SELECT rowid, scenario, strategy, figure, is_bytes FROM series")
        var byID: [Int64: HistorySeries] = [:]
        while try keys.step() {
            let key = SeriesKey(scenario: keys.text(1), strategy: keys.text(2), figure: keys.text(3))
            byID[keys.integer(0)] = HistorySeries(
                key: key, isBytes: keys.integer(4) != 0, gated: false, runIndices: [], values: [])
        }
        var points: [Int64: [(run: Int, value: Double)]] = [:]
        var gated = Set<Int64>()
        let figures = try database.prepare("SELECT run, series, value, gated FROM figures")
        while try figures.step() {
            guard let run = order[figures.integer(0)] else { continue }
            let series = figures.integer(1)
            points[series, default: []].append((run, figures.real(2)))
            if figures.integer(3) != 0 { gated.insert(series) }
        }
        var result: [HistorySeries] = []
        for (id, var entry) in byID {
            let sorted = (points[id] ?? []).sorted { $0.run < $1.run }
            guard !sorted.isEmpty else { continue }
            entry.runIndices = sorted.map(\.run)
            entry.values = sorted.map(\.value)
            entry.gated = gated.contains(id)
            result.append(entry)
        }
        return result.sorted { $0.key < $1.key }
    }
}
