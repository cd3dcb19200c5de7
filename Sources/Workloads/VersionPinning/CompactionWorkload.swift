import CSQLite
import WorkloadKit
import HarnessModel

#if canImport(Glibc)
import Glibc
#endif

/// Bulk deletes leave free pages behind and the file keeps its size until it is compacted: SQLite.
///
/// The modelled system is the seed's compaction advice for a Realm file, on SQLite, where deleted
/// rows become free pages (`PRAGMA freelist_count`) that new writes reuse but that never leave the
/// file by themselves (with the default `auto_vacuum=NONE`). The strategies are the seed's
/// compaction policies, each with the SQLite operation that does the same work:
/// - `never-compact`: nothing; the file stays at its high-water mark.
/// - `auto-compact`: after each commit, compact in place (`VACUUM`, then a TRUNCATE checkpoint) when
///   the unused space exceeds twice the used data, the seed's automatic-compaction rule.
/// - `compact-on-launch`: at `relaunch`, reopen and compact in place when the file is over
///   `launchCompactAbove` and less than `launchUsedBelow` of it is used (the seed's example:
///   100 MB and 50%).
/// - `compacted-copy`: at `relaunch`, once reopened, always write a compacted copy (`VACUUM INTO`,
///   a fresh file like `writeCopy(toFile:)`, whose destination must not exist), close, and move the
///   copy over the original before opening it again (the seed's manual compaction: read
///   everything, write a new file, replace the original).
///
/// In WAL mode `VACUUM` writes the rebuilt database through the WAL (after building it in a
/// temporary database SQLite deletes on close, outside the scratch directory and not counted here),
/// so the in-place strategies write the data twice; `VACUUM INTO` writes it once.
public struct CompactionWorkload: Workload {
    public init() {}

    /// The strategies, as scenario files name them.
    public enum Strategy: String, CaseIterable, Sendable {
        case neverCompact = "never-compact"
        case autoCompact = "auto-compact"
        case compactOnLaunch = "compact-on-launch"
        case compactedCopy = "compacted-copy"
    }

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "compaction",
            summary: "SQLite after bulk deletes: free pages stay in the file until a compaction policy gives them back.",
            strategies: [
                StrategyDescriptor(Strategy.neverCompact.rawValue, "Never compact: the file keeps its largest size."),
                StrategyDescriptor(Strategy.autoCompact.rawValue,
                                   "After each commit, VACUUM in place when unused space exceeds twice the used data."),
                StrategyDescriptor(Strategy.compactOnLaunch.rawValue,
                                   "At relaunch, VACUUM in place when the file is over launchCompactAbove and less than launchUsedBelow of it is used."),
                StrategyDescriptor(Strategy.compactedCopy.rawValue,
                                   "At relaunch, write a compacted copy with VACUUM INTO and move it over the original."),
            ],
            parameters: [
                .bytes("payloadSize", default: 1024, range: 1...(1 << 20), "Size of each row's random blob, bytes."),
                .count("rowsPerTransaction", default: 500, range: 1...10_000_000, "Rows inserted or deleted per commit."),
                .bytes("launchCompactAbove", default: 100 << 20, range: 0...(1 << 40),
                       "compact-on-launch: file size above which it compacts, bytes (the seed's example: 100 MB, i.e. 100 * 1024 * 1024)."),
                .fraction("launchUsedBelow", default: 0.5,
                          "compact-on-launch: used share of the file below which it compacts (the seed's example uses 50%)."),
            ],
            steps: [
                StepDescriptor("fill", "Insert rows of payloadSize until this much payload was added.",
                               arguments: [.bytes("size", default: 80 << 20, range: 1...(1 << 40), "Payload to insert, bytes.")]),
                StepDescriptor("delete", "Delete this share of the rows, oldest first (a purge of old records).",
                               arguments: [.fraction("fraction", default: 0.8, "Share of the current rows to delete.")]),
                StepDescriptor("relaunch", "Close the database and open it again, as an app does at launch (compact-on-launch and compacted-copy act here)."),
            ],
            gauges: FileGauges.descriptors + [
                GaugeDescriptor("diskBytes", "Database, WAL and compacted copy together on disk, bytes."),
                GaugeDescriptor("compactions", "Compactions so far, compactions."),
            ],
            defaultSteps: ["fill", "delete", "relaunch"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase {
        CompactionCase(strategy: validatedStrategy(strategy, of: descriptor.name), parameters: parameters, context: context)
    }
}

/// One case of `CompactionWorkload`.
final class CompactionCase: WorkloadCase {
    let strategy: CompactionWorkload.Strategy
    let path: String
    private let parameters: ParameterValues
    private let files: FileGauges
    private let diskBytes: Gauge
    private let compactionCount: Gauge
    private var connection: SQLiteConnection?

    private var peaks = FilePeaks()
    private var peakDiskBytes = 0
    private var compactions = 0
    private var compactionNanoseconds: Int64 = 0
    private var final: DatabaseFigures?
    private var finalRows = 0

    /// Where `compacted-copy` writes its copy before moving it over the database.
    var copyPath: String { path + ".compacted" }

    init(strategy: CompactionWorkload.Strategy, parameters: ParameterValues, context: CaseContext) {
        self.strategy = strategy
        self.parameters = parameters
        path = context.scratchDirectory + "/compaction.sqlite"
        files = FileGauges(context)
        diskBytes = context.gauge("diskBytes")
        compactionCount = context.gauge("compactions")
    }

    func setUp(context: CaseContext) throws {
        let connection = try SQLiteConnection(path: path)
        self.connection = connection
        try connection.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
        try observe(connection)
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        guard let connection else { return }
        switch step.name {
        case "fill": try fill(connection, payloadBytes: step.arguments.bytes("size"))
        case "delete": try delete(connection, fraction: step.arguments.fraction("fraction"))
        case "relaunch": try relaunch(connection)
        default:
            // The parser accepts only declared steps; an unknown one is a caller's mistake.
            preconditionFailure("compaction has no step '\(step.name)'")
        }
    }

    func tearDown(context: CaseContext) throws {
        if let connection {
            final = try observe(connection)
            finalRows = try connection.integer("SELECT count(*) FROM items")
        }
        connection?.close()
        connection = nil
    }

    private func fill(_ connection: SQLiteConnection, payloadBytes: Int) throws(VersionPinningError) {
        let payloadSize = parameters.bytes("payloadSize")
        var remaining = max(1, payloadBytes / payloadSize)
        let insert = try connection.prepare("INSERT INTO items(payload) VALUES (randomblob(?1))")
        while remaining > 0 {
            let batch = min(remaining, parameters.count("rowsPerTransaction"))
            try connection.execute("BEGIN")
            for _ in 0..<batch {
                insert.bind(payloadSize)
                try insert.run()
            }
            try connection.execute("COMMIT")
            remaining -= batch
            try afterCommit(connection)
        }
    }

    private func delete(_ connection: SQLiteConnection, fraction: Double) throws(VersionPinningError) {
        let rows = try connection.integer("SELECT count(*) FROM items")
        var remaining = Int((Double(rows) * fraction).rounded())
        let delete = try connection.prepare("DELETE FROM items WHERE id IN (SELECT id FROM items ORDER BY id LIMIT ?1)")
        while remaining > 0 {
            let batch = min(remaining, parameters.count("rowsPerTransaction"))
            delete.bind(batch)
            try delete.run()
            remaining -= batch
            try afterCommit(connection)
        }
    }

    /// Observes the files and, under `auto-compact`, applies the seed's automatic rule.
    private func afterCommit(_ connection: SQLiteConnection) throws(VersionPinningError) {
        let figures = try observe(connection)
        // Page figures, not file sizes: until a checkpoint the file lags what the WAL already holds.
        if strategy == .autoCompact,
           CompactionRules.autoCompactionDue(totalBytes: figures.totalPageBytes, usedBytes: figures.usedBytes) {
            try compactInPlace(connection)
        }
    }

    private func relaunch(_ connection: SQLiteConnection) throws(VersionPinningError) {
        // Closing the last connection checkpoints the WAL into the file and deletes it.
        connection.close()
        let reopened = try reopen()
        let figures = try observe(reopened)
        switch strategy {
        case .compactOnLaunch:
            if CompactionRules.launchCompactionDue(totalBytes: figures.databaseBytes, usedBytes: figures.usedBytes,
                                                   totalAbove: parameters.bytes("launchCompactAbove"),
                                                   usedBelow: parameters.fraction("launchUsedBelow")) {
                try compactInPlace(reopened)
            }
        case .compactedCopy:
            try writeCompactedCopy(reopened)
        case .neverCompact, .autoCompact:
            break
        }
    }

    private func reopen() throws(VersionPinningError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path)
        self.connection = connection
        return connection
    }

    /// `VACUUM` (rebuilds the database through the WAL), then a TRUNCATE checkpoint (which copies it
    /// into the file, shrinks the file to the new page count and empties the WAL).
    private func compactInPlace(_ connection: SQLiteConnection) throws(VersionPinningError) {
        let start = monotonicNanoseconds()
        try connection.execute("VACUUM")
        try observe(connection)
        let result = try connection.checkpoint(.truncate)
        guard result.isComplete else {
            throw .sqlite(code: SQLITE_BUSY, message: "checkpoint after VACUUM left \(result.logFrames - result.checkpointedFrames) frames",
                          operation: "checkpoint (truncate)", path: path)
        }
        finishCompaction(startedAt: start)
        try observe(connection)
    }

    /// `VACUUM INTO` a fresh file, close, move the copy over the original, reopen (at launch, so the
    /// close has no WAL left to copy back and the time is the copy's own).
    private func writeCompactedCopy(_ connection: SQLiteConnection) throws(VersionPinningError) {
        let copy = copyPath
        // Like writeCopy(toFile:), refuse to overwrite: an existing file there is not ours.
        guard access(copy, F_OK) != 0 else { throw .copyDestinationExists(path: copy) }
        let start = monotonicNanoseconds()
        try connection.execute("VACUUM INTO " + sqlStringLiteral(copy))
        try observe(connection)
        connection.close()
        guard rename(copy, path) == 0 else { throw .fileSystem(operation: "rename to \(path)", path: copy, errno: errno) }
        let reopened = try reopen()
        finishCompaction(startedAt: start)
        try observe(reopened)
    }

    private func finishCompaction(startedAt start: Int64) {
        compactionNanoseconds += monotonicNanoseconds() - start
        compactions += 1
        compactionCount.set(Int64(compactions))
    }

    @discardableResult
    private func observe(_ connection: SQLiteConnection) throws(VersionPinningError) -> DatabaseFigures {
        let figures = try connection.figures()
        peaks.note(figures)
        files.publish(figures)
        let disk = figures.databaseBytes + figures.walBytes + fileBytes(copyPath)
        peakDiskBytes = max(peakDiskBytes, disk)
        diskBytes.set(Int64(disk))
        return figures
    }

    func metrics() -> [Metric] {
        var metrics: [Metric] = [
            .bytes("peakDatabaseBytes", peaks.databaseBytes),
            .bytes("peakWalBytes", peaks.walBytes),
            .bytes("peakDiskBytes", peakDiskBytes),
            .count("compactions", compactions),
            .milliseconds("compactionTime", nanoseconds: compactionNanoseconds),
        ]
        if let final {
            metrics += [
                .bytes("finalDatabaseBytes", final.databaseBytes),
                .bytes("finalWalBytes", final.walBytes),
                .count("finalPageCount", final.pageCount),
                .count("finalFreePages", final.freePages),
                Metric(name: "finalUsedRatio", value: final.usedRatio, unit: .ratio),
                .count("finalRows", finalRows),
            ]
        }
        return metrics
    }
}

/// `text` as an SQL string literal (single quotes doubled).
func sqlStringLiteral(_ text: String) -> String {
    "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
}
