import CSQLite
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

/// Bulk deletes leave free pages behind and the file keeps its size until it is compacted: SQLite.
///
/// The modelled system is the seed's compaction advice for a Realm file, on SQLite, where deleted
/// rows become free pages (`PRAGMA freelist_count`) that new writes reuse but that never leave the
/// file by themselves. The strategies are the seed's compaction policies, each with the SQLite
/// operation that does the same work:
/// - `never-compact`: nothing; the file stays at its high-water mark.
/// - `auto-compact`: automatic compaction in the background (`AutoCompactor`): when the unused
///   space exceeds twice the used data and nobody accesses the file (no read transaction open, no
///   write session under way), a thread of its own compacts in place with `incremental_vacuum`
///   steps (the file is created with `auto_vacuum=INCREMENTAL`), then truncates. A reader that
///   pins a version (`pin`) blocks it until `unpin`.
/// - `compact-on-launch`: at `relaunch`, reopen and compact in place (`VACUUM`, then a TRUNCATE
///   checkpoint) when the file is over `launchCompactAbove` and less than `launchUsedBelow` of it is
///   used (the seed's example: 100 MB and 50%); the launch waits for it.
/// - `compacted-copy`: at `relaunch`, once reopened, always write a compacted copy (`VACUUM INTO`,
///   a fresh file like `writeCopy(toFile:)`, whose destination must not exist), close, and move the
///   copy over the original before opening it again (the seed's manual compaction: read
///   everything, write a new file, replace the original).
///
/// In WAL mode `VACUUM` writes the rebuilt database through the WAL (after building it in a
/// temporary database SQLite deletes on close, outside the scratch directory and not counted here),
/// so compact-on-launch writes the data twice; `VACUUM INTO` writes it once. Connections run with
/// `synchronous=OFF` (see `ConnectionOptions.flushes`): compaction times are SQLite's work and the
/// page cache's, not this machine's disk flushes.
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
            summary:
                "SQLite after bulk deletes: free pages stay in the file until a compaction policy gives them back.",
            strategies: Self.strategyDescriptors,
            parameters: Self.parameterSpecs,
            steps: Self.stepDescriptors,
            gauges: Self.gaugeDescriptors,
            metrics: Self.metricDescriptors,
            defaultSteps: ["fill", "delete", "relaunch"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
    {
        CompactionCase(
            strategy: validatedStrategy(strategy, of: descriptor.name), parameters: parameters, context: context)
    }
}

/// One case of `CompactionWorkload`.
final class CompactionCase: WorkloadCase {
    let strategy: CompactionWorkload.Strategy
    let path: String
    private let parameters: ParameterValues
    private let options: ConnectionOptions
    private let gauges: CompactionGauges
    private let diskBytes: Gauge
    private let fileAccess: FileAccess
    private var connection: SQLiteConnection?
    /// The reader holding a read transaction between `pin` and `unpin`.
    private var pinnedReader: SQLiteConnection?
    /// The background compactor while the database is open (auto-compact only).
    private var compactor: AutoCompactor?

    private var peaks = FilePeaks()
    private var peakDiskBytes = 0
    /// Compactions at relaunch (compact-on-launch, compacted-copy) and their time.
    private var launchCompactions = 0
    private var launchCompactionNanoseconds: Int64 = 0
    private var launchNanoseconds: Int64 = 0
    /// What the background compactor did over its runs.
    private var automatic = AutoCompactionFigures()
    private var final: DatabaseFigures?
    private var finalRows = 0

    /// Where `compacted-copy` writes its copy before moving it over the database.
    var copyPath: String { path + ".compacted" }

    init(strategy: CompactionWorkload.Strategy, parameters: ParameterValues, context: CaseContext) {
        self.strategy = strategy
        self.parameters = parameters
        path = context.scratchDirectory + "/compaction.sqlite"
        options = ConnectionOptions(flushes: false)
        gauges = CompactionGauges(
            files: FileGauges(context), compactions: context.gauge("compactions"),
            compactionBlocked: context.gauge("compactionBlocked"))
        diskBytes = context.gauge("diskBytes")
        fileAccess = FileAccess(readGauge: context.gauge("readTransactions"))
    }

    func setUp(context: CaseContext) throws {
        // Automatic compaction needs a file made for incremental vacuum; the others keep SQLite's default.
        // (Only when creating it: asking again on an existing file writes its header anew.)
        var creating = options
        creating.incrementalAutoVacuum = strategy == .autoCompact
        let connection = try SQLiteConnection(path: path, options: creating)
        self.connection = connection
        try connection.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
        try observe(connection)
        startCompactor()
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        guard let connection else { return }
        switch step.name {
        case "fill":
            try writing { () throws(VersionPinningError) in
                try fill(connection, payloadBytes: step.arguments.bytes("size"))
            }
        case "delete":
            try writing { () throws(VersionPinningError) in
                try delete(connection, fraction: step.arguments.fraction("fraction"))
            }
        case "pin": try pin()
        case "unpin": try unpin()
        case "await-compaction": awaitCompaction(limit: step.arguments.duration("limit"))
        case "relaunch": try relaunch(connection)
        default:
            // The parser accepts only declared steps; an unknown one is a caller's mistake.
            preconditionFailure("compaction has no step '\(step.name)'")
        }
    }

    func tearDown(context: CaseContext) throws {
        try stopCompactor()
        try unpin()
        if let connection {
            final = try observe(connection)
            finalRows = try connection.integer("SELECT count(*) FROM items")
        }
        connection?.close()
        connection = nil
    }

    /// Runs `body` as a write session: the file counts as accessed until it returns.
    private func writing(_ body: () throws(VersionPinningError) -> Void) throws(VersionPinningError) {
        fileAccess.beginWrites()
        defer { fileAccess.endWrites() }
        try body()
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
            try observe(connection)
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
            try observe(connection)
        }
    }

    /// Waits (polling every millisecond) until the background compactor has nothing left to do, or `limit` has passed.
    ///
    /// Only a look that began after this step did counts: the one that finished just before it may have read the
    /// file before the last delete made compaction due. The second look finished from here on began after it.
    private func awaitCompaction(limit: Duration) {
        guard let compactor else { return }
        let deadline = ContinuousClock.now + limit
        let looksBefore = compactor.looks
        while (compactor.looks < looksBefore + 2 || !compactor.isSettled) && ContinuousClock.now < deadline {
            Pacer.sleep(for: .milliseconds(1))
        }
    }

    /// Opens a read transaction on a connection of its own and reads from it, so it holds a snapshot.
    private func pin() throws(VersionPinningError) {
        guard pinnedReader == nil else { return }
        let reader = try SQLiteConnection(path: path, options: options)
        fileAccess.beginRead()
        do {
            try reader.execute("BEGIN")
            // BEGIN is deferred: the snapshot is taken by the first read (one row is enough).
            _ = try reader.integer("SELECT count(*) FROM (SELECT id FROM items LIMIT 1)")
        } catch {
            fileAccess.endRead()
            throw error
        }
        pinnedReader = reader
    }

    private func unpin() throws(VersionPinningError) {
        guard let reader = pinnedReader else { return }
        pinnedReader = nil
        defer {
            reader.close()
            fileAccess.endRead()
        }
        try reader.execute("COMMIT")
    }

    /// Closes everything and opens the database again; the on-launch policies compact here, and
    /// the launch waits for them (`launchTime`).
    private func relaunch(_ connection: SQLiteConnection) throws(VersionPinningError) {
        let start = monotonicNanoseconds()
        try stopCompactor()
        try unpin()
        // Closing the last connection checkpoints the WAL into the file and deletes it.
        connection.close()
        let reopened = try reopen()
        let figures = try observe(reopened)
        switch strategy {
        case .compactOnLaunch:
            if CompactionRules.launchCompactionDue(
                totalBytes: figures.databaseBytes, usedBytes: figures.usedBytes,
                totalAbove: parameters.bytes("launchCompactAbove"),
                usedBelow: parameters.fraction("launchUsedBelow"))
            {
                try compactInPlace(reopened)
            }
        case .compactedCopy:
            try writeCompactedCopy(reopened)
        case .neverCompact, .autoCompact:
            break
        }
        launchNanoseconds += monotonicNanoseconds() - start
        startCompactor()
    }

    private func reopen() throws(VersionPinningError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, options: options)
        self.connection = connection
        return connection
    }

    private func startCompactor() {
        guard strategy == .autoCompact, compactor == nil else { return }
        compactor = AutoCompactor.start(
            path: path, options: options, interval: parameters.duration("autoCompactInterval"),
            pagesPerStep: parameters.count("autoCompactPages"), access: fileAccess, gauges: gauges)
    }

    /// Stops the background compactor (after its step under way) and adds up what it did.
    private func stopCompactor() throws(VersionPinningError) {
        guard let compactor else { return }
        self.compactor = nil
        guard let figures = compactor.finish() else { throw .workerVanished("auto-compactor") }
        if let failure = figures.failure { throw failure }
        automatic.compactions += figures.compactions
        automatic.compactingNanoseconds += figures.compactingNanoseconds
        automatic.blockedNanoseconds += figures.blockedNanoseconds
        automatic.steps += figures.steps
        peaks.note(figures.peaks)
        peakDiskBytes = max(peakDiskBytes, figures.peaks.fileBytes)
    }

    /// `VACUUM` (rebuilds the database through the WAL), then a TRUNCATE checkpoint (which copies it
    /// into the file, shrinks the file to the new page count and empties the WAL).
    private func compactInPlace(_ connection: SQLiteConnection) throws(VersionPinningError) {
        let start = monotonicNanoseconds()
        try connection.execute("VACUUM")
        try observe(connection)
        let result = try connection.checkpoint(.truncate)
        guard result.isComplete else {
            throw .sqlite(
                code: SQLITE_BUSY,
                message: "checkpoint after VACUUM left \(result.logFrames - result.checkpointedFrames) frames",
                operation: "checkpoint (truncate)", path: path)
        }
        finishLaunchCompaction(startedAt: start)
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
        guard rename(copy, path) == 0 else {
            throw .fileSystem(operation: "rename to \(path)", path: copy, errno: errno)
        }
        let reopened = try reopen()
        finishLaunchCompaction(startedAt: start)
        try observe(reopened)
    }

    private func finishLaunchCompaction(startedAt start: Int64) {
        launchCompactionNanoseconds += monotonicNanoseconds() - start
        launchCompactions += 1
        gauges.compactions.increment()
    }

    @discardableResult
    private func observe(_ connection: SQLiteConnection) throws(VersionPinningError) -> DatabaseFigures {
        let figures = try connection.figures()
        peaks.note(figures)
        gauges.files.publish(figures)
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
            .count("compactions", launchCompactions + automatic.compactions),
            // Every policy's time spent compacting, wherever it ran (the launch, or the background thread).
            .milliseconds("compactionTime", nanoseconds: launchCompactionNanoseconds + automatic.compactingNanoseconds),
            // What the user waits for at relaunch: close, reopen, and an on-launch compaction.
            .milliseconds("launchTime", nanoseconds: launchNanoseconds),
            // Automatic compaction was due but the file was read or written (a pinned version, a write session).
            .milliseconds("compactionBlockedTime", nanoseconds: automatic.blockedNanoseconds),
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

extension CompactionWorkload {
    /// The strategies, as `memharness list` and reports describe them.
    static let strategyDescriptors: [StrategyDescriptor] = [
        StrategyDescriptor(Strategy.neverCompact.rawValue, "Never compact: the file keeps its largest size."),
        StrategyDescriptor(
            Strategy.autoCompact.rawValue,
            "In the background, when unused space exceeds twice the used data and no one reads or writes the file: "
                + "incremental_vacuum steps, then a truncating checkpoint."),
        StrategyDescriptor(
            Strategy.compactOnLaunch.rawValue,
            "At relaunch, VACUUM in place when the file is over launchCompactAbove and less than launchUsedBelow of "
                + "it is used."
        ),
        StrategyDescriptor(
            Strategy.compactedCopy.rawValue,
            "At relaunch, write a compacted copy with VACUUM INTO and move it over the original."),
    ]

    /// The parameters a scenario file may set, with their defaults and ranges.
    static let parameterSpecs: [ParameterSpec] = [
        .bytes("payloadSize", default: 1024, range: 1...(1 << 20), "Size of each row's random blob, bytes."),
        .count(
            "rowsPerTransaction", default: 500, range: 1...10_000_000, "Rows inserted or deleted per commit."),
        .bytes(
            "launchCompactAbove", default: 100 << 20, range: 0...(1 << 40),
            "compact-on-launch: file size above which it compacts, bytes (the seed's example: 100 MB, i.e. 100 * "
                + "1024 * 1024)."
        ),
        .fraction(
            "launchUsedBelow", default: 0.5,
            "compact-on-launch: used share of the file below which it compacts (the seed's example uses 50%)."),
        .duration(
            "autoCompactInterval", default: .milliseconds(10), range: .microseconds(100) ... .seconds(10),
            "auto-compact: how often the background compactor looks at the file."),
        .count(
            "autoCompactPages", default: 1024, range: 1...10_000_000,
            "auto-compact: pages moved per incremental_vacuum step (one write transaction: a write arriving waits "
                + "for one step at most, a reader arriving stops the compaction after it)."),
    ]

    /// The steps a scenario's script may use, with their arguments.
    static let stepDescriptors: [StepDescriptor] = [
        StepDescriptor(
            "fill", "Insert rows of payloadSize until this much payload was added.",
            arguments: [.bytes("size", default: 80 << 20, range: 1...(1 << 40), "Payload to insert, bytes.")]),
        StepDescriptor(
            "delete", "Delete this share of the rows, oldest first (a purge of old records).",
            arguments: [.fraction("fraction", default: 0.8, "Share of the current rows to delete.")]),
        StepDescriptor(
            "pin",
            "A reader opens a read transaction and keeps it (a version pinned, e.g. by a screen still showing old "
                + "results)."
        ),
        StepDescriptor("unpin", "The reader ends its read transaction."),
        StepDescriptor(
            "await-compaction",
            "Stay idle (no reads, no writes) until no automatic compaction is due or under way; at once for the "
                + "other policies.",
            arguments: [
                .duration(
                    "limit", default: .seconds(10), range: .zero ... .seconds(600),
                    "Give up waiting after this long (what is left shows in finalFreePages).")
            ]),
        StepDescriptor(
            "relaunch",
            "Close the database and open it again, as an app does at launch (compact-on-launch and compacted-copy "
                + "act here)."
        ),
    ]

    /// The gauges sampled beside the allocator's figures.
    static let gaugeDescriptors: [GaugeDescriptor] =
        FileGauges.descriptors + [
            GaugeDescriptor("diskBytes", "Database, WAL and compacted copy together on disk, bytes."),
            GaugeDescriptor("compactions", "Compactions finished so far, compactions."),
            GaugeDescriptor(
                "readTransactions", "Read transactions the app holds open (pinned versions), transactions."),
            GaugeDescriptor(
                "compactionBlocked", "1 while automatic compaction is due but the file is being read or written."),
        ]

    /// The metrics a case reports when it ends.
    static let metricDescriptors: [MetricDescriptor] = [
        MetricDescriptor("peakDatabaseBytes", .bytes, "Largest size of the database file."),
        MetricDescriptor("peakWalBytes", .bytes, "Largest size of the WAL file."),
        MetricDescriptor(
            "peakDiskBytes", .bytes, "Most bytes on disk at once: database, WAL and compacted copy."),
        MetricDescriptor("compactions", .count, "Compactions finished, at launch or in the background."),
        MetricDescriptor("compactionTime", .milliseconds, "Time spent compacting, wherever it ran."),
        MetricDescriptor(
            "launchTime", .milliseconds,
            "Close, reopen and any on-launch compaction: what the user waits for at relaunch."),
        MetricDescriptor(
            "compactionBlockedTime", .milliseconds,
            "Time automatic compaction was due but the file was read or written."),
        MetricDescriptor("finalDatabaseBytes", .bytes, "Database size at the end of the script."),
        MetricDescriptor("finalWalBytes", .bytes, "WAL size at the end of the script."),
        MetricDescriptor("finalPageCount", .count, "Pages of the database at the end of the script."),
        MetricDescriptor("finalFreePages", .count, "Free pages of the database at the end of the script."),
        MetricDescriptor(
            "finalUsedRatio", .ratio, "Share of the database's pages in use at the end of the script."),
        MetricDescriptor("finalRows", .count, "Rows left at the end of the script."),
    ]
}
