import Dispatch
import WorkloadKit

/// What the writer thread does during a burst; plain values so they cross to its thread.
struct WriterPlan: Sendable {
    var path: String
    /// Rows in the table (ids `1...rows`).
    var rows: Int
    /// Size of the random blob each update writes, bytes.
    var payloadBytes: Int
    /// Commits per second.
    var rate: Double
    /// Rows updated by each commit.
    var rowsPerCommit: Int
    /// Frames in the WAL at which the writer runs a PASSIVE checkpoint after its commit.
    var checkpointFrames: Int
    var seed: UInt64
}

/// What the writer did during a burst.
struct WriterReport: Sendable {
    var commits = 0
    var checkpoints = 0
    /// Checkpoints that could not copy every frame back (a reader's snapshot was in the way).
    var incompleteCheckpoints = 0
    /// Most frames the WAL held after a commit.
    var peakWALFrames = 0
    var peaks = FilePeaks()
    var failure: VersionPinningError?
}

/// The writer and checkpoint gauges the version-pinning workload declares besides the file gauges.
struct WriterGauges: Sendable {
    static let descriptors = [
        GaugeDescriptor("walFrames", "Frames in the WAL after the last commit (the WAL hook's count), frames."),
        GaugeDescriptor(
            "checkpointedFrames", "Frames the last checkpoint had copied back into the database file, frames."),
        GaugeDescriptor("pinningReaders", "Readers holding a read transaction across reads or while blocked, readers."),
        GaugeDescriptor(
            "fileBytes",
            "Database and WAL files together on disk, bytes: the file that grows while a version is pinned."),
    ]

    let files: FileGauges
    let walFrames: Gauge
    let checkpointedFrames: Gauge
    let pinningReaders: Gauge
    let fileBytes: Gauge

    init(_ context: CaseContext) {
        files = FileGauges(context)
        walFrames = context.gauge("walFrames")
        checkpointedFrames = context.gauge("checkpointedFrames")
        pinningReaders = context.gauge("pinningReaders")
        fileBytes = context.gauge("fileBytes")
    }

    /// Sets the file gauges, the database and WAL together included.
    func publish(_ figures: DatabaseFigures) {
        files.publish(figures)
        fileBytes.set(Int64(figures.fileBytes))
    }

    func publish(_ result: CheckpointResult) {
        walFrames.set(Int64(result.logFrames))
        checkpointedFrames.set(Int64(result.checkpointedFrames))
    }
}

/// The writer thread's body: small update transactions at a fixed rate until `stop`.
///
/// SQLite's automatic checkpoint is a WAL hook that runs a PASSIVE checkpoint once a commit leaves
/// at least `wal_autocheckpoint` frames in the WAL. The writer does exactly that itself (the hook
/// only counts frames), so every checkpoint's outcome reaches the gauges and the report.
func runWriter(_ plan: WriterPlan, gauges: WriterGauges, stop: StopSignal) -> WriterReport {
    var report = WriterReport()
    let frames = WALFrameCounter()
    do {
        let connection = try SQLiteConnection(path: plan.path)
        defer { connection.close() }
        connection.countWALFrames(into: frames)
        let figures = try FigureReader(connection)
        let begin = try connection.prepare("BEGIN IMMEDIATE")
        let update = try connection.prepare(
            "UPDATE items SET payload = randomblob(?1), version = version + 1 WHERE id = ?2")
        let commit = try connection.prepare("COMMIT")
        var random = SeededRandom(seed: plan.seed)
        var pacer = StoppablePacer(rate: plan.rate)
        while pacer.wait(unless: stop) {
            try begin.run()
            for _ in 0..<plan.rowsPerCommit {
                update.bind(plan.payloadBytes, Int.random(in: 1...plan.rows, using: &random))
                try update.run()
            }
            try commit.run()
            report.commits += 1
            report.peakWALFrames = max(report.peakWALFrames, frames.frames)
            gauges.walFrames.set(Int64(frames.frames))
            if frames.frames >= plan.checkpointFrames {
                let result = try connection.checkpoint(.passive)
                report.checkpoints += 1
                if !result.isComplete { report.incompleteCheckpoints += 1 }
                gauges.publish(result)
            }
            let now = try figures.read()
            report.peaks.note(now)
            gauges.publish(now)
        }
    } catch {
        report.failure = error
    }
    // The hook writes into `frames` during commits; keep it alive until the connection is closed.
    withExtendedLifetime(frames) {}
    return report
}

/// How a reader holds its read transactions.
enum ReaderBehaviour: Sendable, Hashable {
    /// One read transaction for the whole burst, reading from its snapshot at the reader rate.
    case pinned
    /// One read transaction, then blocked (no reads) for `nanoseconds`; then released, then refreshing.
    case blocked(nanoseconds: Int64)
    /// A short read transaction per read.
    case refreshing
}

/// What a reader thread does during a burst.
struct ReaderPlan: Sendable {
    var path: String
    var rows: Int
    /// Rows read by primary key per read.
    var rowsPerRead: Int
    /// Reads per second (pinned and refreshing readers).
    var rate: Double
    var behaviour: ReaderBehaviour
    var seed: UInt64
}

/// What a reader did during a burst.
struct ReaderReport: Sendable {
    var reads = 0
    var readTransactions = 0
    /// Longest time a read transaction stayed open, nanoseconds.
    var longestTransactionNanoseconds: Int64 = 0
    var failure: VersionPinningError?
}

/// The reader thread's body; signals `ready` once its first snapshot is taken (or it failed).
func runReader(_ plan: ReaderPlan, pinning: Gauge, ready: DispatchSemaphore, stop: StopSignal) -> ReaderReport {
    var report = ReaderReport()
    var signalled = false
    func signalReady() {
        if !signalled { ready.signal() }
        signalled = true
    }
    defer { signalReady() }
    do {
        let connection = try SQLiteConnection(path: plan.path)
        defer { connection.close() }
        var reader = try ReadTransactions(connection, plan: plan)
        switch plan.behaviour {
        case .pinned, .blocked:
            try reader.holdOneTransaction(pinning: pinning, until: stop, report: &report, whenOpen: signalReady)
        case .refreshing:
            signalReady()
        }
        // Refreshing, or back from being blocked (paced from now, not catching up the blocked time):
        // every read in a transaction of its own.
        var pacer = StoppablePacer(rate: plan.rate)
        while pacer.wait(unless: stop) {
            try reader.close(openedAt: try reader.open(report: &report), report: &report)
        }
        withExtendedLifetime(reader.checksum) {}
    } catch {
        report.failure = error
    }
    return report
}

/// A reader's read transactions on its connection: reads of random rows, counted in the caller's report.
private struct ReadTransactions {
    let plan: ReaderPlan
    let begin: SQLiteStatement
    let commit: SQLiteStatement
    let select: SQLiteStatement
    var random: SeededRandom
    /// The values read, summed.
    var checksum = 0

    init(_ connection: SQLiteConnection, plan: ReaderPlan) throws(VersionPinningError) {
        self.plan = plan
        begin = try connection.prepare("BEGIN")
        commit = try connection.prepare("COMMIT")
        select = try connection.prepare("SELECT length(payload) + version FROM items WHERE id = ?1")
        random = SeededRandom(seed: plan.seed)
    }

    /// The pinned or blocked reader's one transaction: open (and counted on `pinning`) while it reads at the
    /// reader rate until `stop`, or reads nothing for its blocked time. `whenOpen` runs once the snapshot is taken.
    mutating func holdOneTransaction(
        pinning: Gauge, until stop: StopSignal, report: inout ReaderReport, whenOpen: () -> Void
    ) throws(VersionPinningError) {
        let start = try open(report: &report)
        pinning.increment()
        whenOpen()
        if case .blocked(let nanoseconds) = plan.behaviour {
            sleep(until: start + nanoseconds, unless: stop)
        } else {
            var pacer = StoppablePacer(rate: plan.rate)
            while pacer.wait(unless: stop) { try read(report: &report) }
        }
        pinning.decrement()
        try close(openedAt: start, report: &report)
    }

    /// One read: `rowsPerRead` rows by primary key.
    mutating func read(report: inout ReaderReport) throws(VersionPinningError) {
        for _ in 0..<plan.rowsPerRead {
            select.bind(Int.random(in: 1...plan.rows, using: &random))
            checksum &+= try select.scalar()
        }
        report.reads += 1
    }

    /// Opens a read transaction and returns when, nanoseconds. BEGIN is deferred: the snapshot is
    /// taken by the first read after it.
    mutating func open(report: inout ReaderReport) throws(VersionPinningError) -> Int64 {
        try begin.run()
        try read(report: &report)
        report.readTransactions += 1
        return monotonicNanoseconds()
    }

    func close(openedAt start: Int64, report: inout ReaderReport) throws(VersionPinningError) {
        try commit.run()
        report.longestTransactionNanoseconds = max(
            report.longestTransactionNanoseconds, monotonicNanoseconds() - start)
    }
}
