import Dispatch
import WorkloadKit

/// A reader that keeps a read transaction open pins old versions, and the file grows: SQLite in WAL mode.
///
/// The modelled system is the seed's "pinning transactions" (Realm holds every version a live read
/// transaction may still see, and the file grows with every write). SQLite in WAL mode behaves the
/// same way for real: a writer appends each commit's pages to the WAL; a checkpoint copies them back
/// into the database file, but only up to the oldest snapshot a reader still uses, and the WAL can
/// restart from its beginning only once no reader uses it. A reader that holds its transaction thus
/// makes the WAL grow by every commit; when it lets go, growth stops, but the file keeps its size
/// (only a TRUNCATE checkpoint, or closing the last connection, gives the space back).
///
/// During a `burst` a writer thread commits small transactions (random rows rewritten) at
/// `writeRate`, checkpointing like SQLite's automatic checkpoint, and one reader thread reads by the
/// strategy. Gauges follow the files after every commit. The file the seed talks about is the
/// database and its WAL together (`fileBytes`): `fileGrowth` is how much it grew beyond its size
/// before the first burst, at its largest, and `finalFileBytes` what it is at the end of the
/// script; a `checkpoint: truncate` step shrinks the WAL back, which the growth figure still shows.
public struct VersionPinningWorkload: Workload {
    public init() {}

    /// The strategies, as scenario files name them.
    public enum Strategy: String, CaseIterable, Sendable {
        case pinnedReader = "pinned-reader"
        case blockedReader = "blocked-reader"
        case refreshingReader = "refreshing-reader"
        case noReader = "no-reader"
    }

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "version-pinning",
            summary:
                "SQLite in WAL mode: a reader holding a read transaction pins the WAL, which grows with every commit.",
            strategies: Self.strategyDescriptors,
            parameters: Self.parameterSpecs,
            steps: Self.stepDescriptors,
            gauges: Self.gaugeDescriptors,
            metrics: Self.metricDescriptors,
            defaultSteps: ["burst", "checkpoint"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
    {
        VersionPinningCase(
            strategy: validatedStrategy(strategy, of: descriptor.name), parameters: parameters, context: context)
    }
}

/// One case of `VersionPinningWorkload`.
final class VersionPinningCase: WorkloadCase {
    let strategy: VersionPinningWorkload.Strategy
    let path: String
    private let parameters: ParameterValues
    private let gauges: WriterGauges
    private let seed: UInt64
    /// The app's main connection: creates and seeds the table, runs the `checkpoint` step, reads figures.
    private var connection: SQLiteConnection?

    private var commits = 0
    private var burstNanoseconds: Int64 = 0
    private var checkpoints = 0
    private var incompleteCheckpoints = 0
    private var peakWALFrames = 0
    private var peaks = FilePeaks()
    private var reads = 0
    private var readTransactions = 0
    private var longestReadTransactionNanoseconds: Int64 = 0
    private var walBytesAfterBurst = 0
    /// Database and WAL together when the first burst began, bytes: what growth is measured from.
    private var fileBytesBeforeBursts: Int?
    private var stepCheckpoint: CheckpointResult?
    private var finalFigures: DatabaseFigures?

    init(strategy: VersionPinningWorkload.Strategy, parameters: ParameterValues, context: CaseContext) {
        self.strategy = strategy
        self.parameters = parameters
        path = context.scratchDirectory + "/version-pinning.sqlite"
        gauges = WriterGauges(context)
        seed = UInt64(context.repetition)
    }

    func setUp(context: CaseContext) throws {
        let connection = try SQLiteConnection(path: path)
        self.connection = connection
        try connection.execute(
            "CREATE TABLE items(id INTEGER PRIMARY KEY, version INTEGER NOT NULL, payload BLOB NOT NULL)")
        try connection.execute("BEGIN")
        let insert = try connection.prepare("INSERT INTO items(id, version, payload) VALUES (?1, 0, randomblob(?2))")
        for id in 1...parameters.count("rows") {
            insert.bind(id, parameters.bytes("payloadSize"))
            try insert.run()
        }
        try connection.execute("COMMIT")
        // Start every strategy from an empty WAL, so the bursts' growth is all the WAL holds.
        _ = try connection.checkpoint(.truncate)
        try observe(connection)
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        guard let connection else { return }
        switch step.name {
        case "burst":
            let before = try observe(connection)
            if fileBytesBeforeBursts == nil { fileBytesBeforeBursts = before.fileBytes }
            try burst(step.arguments.duration("duration"))
            walBytesAfterBurst = try observe(connection).walBytes
        case "checkpoint":
            let mode = CheckpointMode(rawValue: step.arguments.choice("mode")) ?? .truncate
            let result = try connection.checkpoint(mode)
            stepCheckpoint = result
            gauges.publish(result)
            try observe(connection)
        default:
            // The parser accepts only declared steps; an unknown one is a caller's mistake.
            preconditionFailure("version-pinning has no step '\(step.name)'")
        }
    }

    func tearDown(context: CaseContext) throws {
        if let connection { finalFigures = try observe(connection) }
        // Closing the last connection checkpoints and deletes the WAL; the figures above come first.
        connection?.close()
        connection = nil
    }

    @discardableResult
    private func observe(_ connection: SQLiteConnection) throws(VersionPinningError) -> DatabaseFigures {
        let figures = try connection.figures()
        peaks.note(figures)
        gauges.publish(figures)
        return figures
    }

    private func burst(_ duration: Duration) throws {
        // The writer stops first, so a pinned reader holds its snapshot through the last commit.
        let stopWriter = StopSignal()
        let stopReader = StopSignal()
        let ready = DispatchSemaphore(value: 0)
        let rows = parameters.count("rows")
        let behaviour: ReaderBehaviour? =
            switch strategy {
            case .pinnedReader: .pinned
            case .blockedReader:
                .blocked(nanoseconds: Int64(Double(duration.nanoseconds) * parameters.fraction("blockedShare")))
            case .refreshingReader: .refreshing
            case .noReader: nil
            }
        let reader = behaviour.map { behaviour in
            let plan = ReaderPlan(
                path: path, rows: rows, rowsPerRead: parameters.count("rowsPerRead"),
                rate: parameters.rate("readRate"), behaviour: behaviour, seed: seed &* 31 &+ 7)
            return WorkerThread.start(name: "reader") { [gauges] in
                runReader(plan, pinning: gauges.pinningReaders, ready: ready, stop: stopReader)
            }
        }
        // The writer starts once the reader holds its snapshot, so a pinned reader pins from the first commit.
        if reader != nil { ready.wait() }
        let plan = WriterPlan(
            path: path, rows: rows, payloadBytes: parameters.bytes("payloadSize"),
            rate: parameters.rate("writeRate"), rowsPerCommit: parameters.count("rowsPerCommit"),
            checkpointFrames: parameters.count("checkpointFrames"), seed: seed)
        let start = monotonicNanoseconds()
        let writer = WorkerThread.start(name: "writer") { [gauges] in runWriter(plan, gauges: gauges, stop: stopWriter)
        }
        sleep(until: start + duration.nanoseconds, unless: StopSignal())
        stopWriter.stop()
        let writerReport = writer.join()
        stopReader.stop()
        let readerReport = reader?.join()
        burstNanoseconds += monotonicNanoseconds() - start

        guard let writerReport else { throw VersionPinningError.workerVanished("writer") }
        if let failure = writerReport.failure { throw failure }
        commits += writerReport.commits
        checkpoints += writerReport.checkpoints
        incompleteCheckpoints += writerReport.incompleteCheckpoints
        peakWALFrames = max(peakWALFrames, writerReport.peakWALFrames)
        peaks.note(writerReport.peaks)
        if reader != nil {
            guard let readerReport else { throw VersionPinningError.workerVanished("reader") }
            if let failure = readerReport.failure { throw failure }
            reads += readerReport.reads
            readTransactions += readerReport.readTransactions
            longestReadTransactionNanoseconds = max(
                longestReadTransactionNanoseconds, readerReport.longestTransactionNanoseconds)
        }
    }

    func metrics() -> [Metric] {
        // How much bigger the file got than before the bursts, at its largest. Not reset by a
        // checkpoint: a TRUNCATE one shrinks the WAL back, but the growth happened.
        let growth = fileBytesBeforeBursts.map { max(peaks.fileBytes - $0, 0) }
        var metrics: [Metric] = []
        if let growth {
            metrics += [
                .bytes("fileGrowth", growth),
                // Per commit, so the figure does not depend on how long the burst was.
                .bytes("fileGrowthPerCommit", commits > 0 ? growth / commits : 0),
            ]
        }
        metrics += [
            .count("commits", commits),
            Metric(
                name: "commitRate",
                value: burstNanoseconds > 0 ? Double(commits) / (Double(burstNanoseconds) / 1e9) : 0,
                unit: .perSecond),
            .count("reads", reads),
            .count("readTransactions", readTransactions),
            .milliseconds("longestReadTransaction", nanoseconds: longestReadTransactionNanoseconds),
            .bytes("peakWalBytes", peaks.walBytes),
            .count("peakWalFrames", peakWALFrames),
            .bytes("walBytesAfterBurst", walBytesAfterBurst),
            .bytes("peakDatabaseBytes", peaks.databaseBytes),
            .bytes("peakFileBytes", peaks.fileBytes),
            .count("checkpoints", checkpoints),
            .count("incompleteCheckpoints", incompleteCheckpoints),
        ]
        if let stepCheckpoint {
            // Whether the `checkpoint` step had to give up on a reader (FULL, RESTART, TRUNCATE only).
            metrics.append(.count("stepCheckpointBusy", stepCheckpoint.busy ? 1 : 0))
        }
        if let finalFigures {
            metrics += [
                // At the end of the script, before teardown closes the database (the last close checkpoints and deletes
                // the WAL).
                .bytes("finalFileBytes", finalFigures.fileBytes),
                .bytes("finalWalBytes", finalFigures.walBytes),
            ]
        }
        return metrics
    }
}

extension VersionPinningWorkload {
    /// The strategies, as `memharness list` and reports describe them.
    static let strategyDescriptors: [StrategyDescriptor] = [
        StrategyDescriptor(
            Strategy.pinnedReader.rawValue,
            "A reader opens a read transaction and keeps reading from it for the whole burst (a version kept alive "
                + "on a background thread)."
        ),
        StrategyDescriptor(
            Strategy.blockedReader.rawValue,
            "A reader reads, then blocks in a long operation for blockedShare of the burst while holding its "
                + "transaction, then releases it and refreshes per read."
        ),
        StrategyDescriptor(
            Strategy.refreshingReader.rawValue,
            "A reader opens a short read transaction per read (auto-refresh, or invalidate() after use)."),
        StrategyDescriptor(Strategy.noReader.rawValue, "The writer alone: the floor."),
    ]

    /// The parameters a scenario file may set, with their defaults and ranges.
    static let parameterSpecs: [ParameterSpec] = [
        .count(
            "rows", default: 2000, range: 1...10_000_000, "Rows in the table; the writer rewrites random ones."),
        .bytes("payloadSize", default: 1024, range: 1...(1 << 20), "Size of each row's random blob, bytes."),
        .rate("writeRate", default: 1000, range: 0.1...100_000, "Commits per second during a burst."),
        .count("rowsPerCommit", default: 4, range: 1...10_000, "Rows rewritten by each commit."),
        .rate(
            "readRate", default: 100, range: 0.1...100_000,
            "Reads per second of the reader (not while it is blocked)."),
        .count("rowsPerRead", default: 8, range: 1...10_000, "Rows a read looks up by primary key."),
        .count(
            "checkpointFrames", default: 1000, range: 1...10_000_000,
            "WAL frames after a commit at which the writer runs a PASSIVE checkpoint (SQLite's wal_autocheckpoint; "
                + "its default is 1000)."
        ),
        .fraction(
            "blockedShare", default: 0.5,
            "Share of each burst blocked-reader spends blocked holding its transaction, from its first read (a "
                + "share, so --quick scales it with the burst)."
        ),
    ]

    /// The steps a scenario's script may use, with their arguments.
    static let stepDescriptors: [StepDescriptor] = [
        StepDescriptor(
            "burst",
            "Start the strategy's reader and the writer, run for a while, stop the writer, then the reader (which "
                + "releases its transaction).",
            arguments: [
                .duration(
                    "duration", default: .seconds(2), range: .milliseconds(1) ... .seconds(3600),
                    "How long the burst lasts.")
            ]),
        StepDescriptor(
            "checkpoint", "Run one checkpoint on the main connection and record its outcome.",
            arguments: [
                .choice(
                    "mode", CheckpointMode.allCases.map(\.rawValue), default: CheckpointMode.truncate.rawValue,
                    "Checkpoint mode: passive copies what it can, truncate also shrinks the WAL file to zero.")
            ]),
    ]

    /// The gauges sampled beside the allocator's figures.
    static let gaugeDescriptors: [GaugeDescriptor] = FileGauges.descriptors + WriterGauges.descriptors

    /// The metrics a case reports when it ends.
    static let metricDescriptors: [MetricDescriptor] = [
        MetricDescriptor(
            "fileGrowth", .bytes,
            "Largest size of database and WAL beyond their size before the bursts (after a burst only)."),
        MetricDescriptor(
            "fileGrowthPerCommit", .bytes,
            "fileGrowth per commit, independent of the burst's length (after a burst only)."),
        MetricDescriptor("commits", .count, "Write transactions committed."),
        MetricDescriptor("commitRate", .perSecond, "Commits per second of burst."),
        MetricDescriptor("reads", .count, "Reads the reader threads made."),
        MetricDescriptor("readTransactions", .count, "Read transactions the reader threads opened."),
        MetricDescriptor(
            "longestReadTransaction", .milliseconds,
            "Longest a read transaction stayed open (pinning a version)."),
        MetricDescriptor("peakWalBytes", .bytes, "Largest size of the WAL file."),
        MetricDescriptor("peakWalFrames", .count, "Most frames in the WAL."),
        MetricDescriptor("walBytesAfterBurst", .bytes, "WAL size when the last burst ended."),
        MetricDescriptor("peakDatabaseBytes", .bytes, "Largest size of the database file."),
        MetricDescriptor("peakFileBytes", .bytes, "Largest size of database and WAL together."),
        MetricDescriptor("checkpoints", .count, "Checkpoints run."),
        MetricDescriptor(
            "incompleteCheckpoints", .count,
            "Checkpoints that could not copy every frame back (a reader pinned them)."),
        MetricDescriptor(
            "stepCheckpointBusy", .count,
            "1 when the checkpoint step gave up on a reader (FULL, RESTART, TRUNCATE; with that step only)."),
        MetricDescriptor(
            "finalFileBytes", .bytes,
            "Database and WAL size at the end of the script, before teardown closes the database."),
        MetricDescriptor("finalWalBytes", .bytes, "WAL size at the end of the script."),
    ]
}
