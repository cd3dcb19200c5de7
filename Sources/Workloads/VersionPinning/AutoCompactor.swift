import Synchronization
import WorkloadKit

/// Who is using the database file right now: the app's read transactions and write sessions.
///
/// Automatic compaction runs "only when the file is not being accessed" (seed 004); the app marks
/// its accesses here and the compactor looks before every step.
final class FileAccess: Sendable {
    private let readTransactions = Atomic<Int>(0)
    private let writeSessions = Atomic<Int>(0)
    private let readGauge: Gauge

    init(readGauge: Gauge) {
        self.readGauge = readGauge
    }

    /// A read transaction was opened (a version is pinned until `endRead`).
    func beginRead() {
        readTransactions.add(1, ordering: .releasing)
        readGauge.increment()
    }

    func endRead() {
        readTransactions.subtract(1, ordering: .releasing)
        readGauge.decrement()
    }

    /// The app started writing (a step of inserts or deletes, many commits).
    func beginWrites() { writeSessions.add(1, ordering: .releasing) }

    func endWrites() { writeSessions.subtract(1, ordering: .releasing) }

    /// Read transactions open now.
    var openReadTransactions: Int { readTransactions.load(ordering: .acquiring) }

    /// Whether anyone reads or writes the file now.
    var isAccessed: Bool {
        readTransactions.load(ordering: .acquiring) > 0 || writeSessions.load(ordering: .acquiring) > 0
    }
}

/// What the background compactor did, added up over its runs (it stops at every relaunch).
struct AutoCompactionFigures: Sendable, Hashable {
    /// Compactions finished: from the first step to the file truncated to its data.
    var compactions = 0
    /// Time spent compacting (incremental-vacuum steps and the truncating checkpoint), nanoseconds.
    var compactingNanoseconds: Int64 = 0
    /// Time the rule held but the file was being accessed, so the compactor waited, nanoseconds.
    var blockedNanoseconds: Int64 = 0
    /// Incremental-vacuum steps run (one transaction each).
    var steps = 0
    /// Largest database and WAL files the compactor saw.
    var peaks = FilePeaks()
    var failure: VersionPinningError?
}

/// The background thread of `auto-compact`: automatic compaction as the seed describes Realm's.
///
/// Every `interval` it reads the page figures on its own connection. When the unused space exceeds
/// twice the used data (`CompactionRules.autoCompactionDue`) and nobody accesses the file, it
/// compacts in place, a step at a time: `PRAGMA incremental_vacuum(pagesPerStep)` moves data from
/// the end of the file into free pages and cuts the end off (one write transaction per step),
/// until no free page is left; then a TRUNCATE checkpoint copies the result into the database
/// file, which shrinks, and empties the WAL. Before each step it looks again: a reader or a write
/// session that arrives pauses the compaction after the step under way, and it resumes when the
/// file is idle again. While the rule holds and the file is accessed, the time counts as blocked.
final class AutoCompactor: Sendable {
    private let stop: StopSignal
    private let settled: SettledFlag
    private let worker: WorkerThread<AutoCompactionFigures>

    private init(stop: StopSignal, settled: SettledFlag, worker: WorkerThread<AutoCompactionFigures>) {
        self.stop = stop
        self.settled = settled
        self.worker = worker
    }

    /// Whether the compactor's last look found nothing to do: the rule does not hold and no
    /// compaction is under way (false until its first look).
    var isSettled: Bool { settled.value }

    /// Looks the compactor has finished so far. A look that finished earlier may have read the file before
    /// the app's last write: a caller waiting for what the file is now waits for looks that started later.
    var looks: Int { settled.looks }

    /// Starts the compactor on the database at `path`.
    static func start(
        path: String, options: ConnectionOptions, interval: Duration, pagesPerStep: Int,
        access: FileAccess, gauges: CompactionGauges
    ) -> AutoCompactor {
        let stop = StopSignal()
        let settled = SettledFlag()
        let worker = WorkerThread.start(name: "auto-compactor") {
            runAutoCompactor(
                path: path, options: options, intervalNanoseconds: interval.nanoseconds,
                pagesPerStep: pagesPerStep, access: access, gauges: gauges, settled: settled, stop: stop)
        }
        return AutoCompactor(stop: stop, settled: settled, worker: worker)
    }

    /// Stops the compactor (after the step under way) and returns what it did.
    func finish() -> AutoCompactionFigures? {
        stop.stop()
        return worker.join()
    }
}

/// Set by the compactor after each look: whether it found nothing to do, and how many looks it finished.
final class SettledFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    private let finishedLooks = Atomic<Int>(0)
    var value: Bool { flag.load(ordering: .acquiring) }
    var looks: Int { finishedLooks.load(ordering: .acquiring) }
    func set(_ value: Bool) {
        flag.store(value, ordering: .releasing)
        finishedLooks.add(1, ordering: .releasing)
    }
}

/// The gauges of the compaction workload the compactor sets besides the file gauges.
struct CompactionGauges: Sendable {
    let files: FileGauges
    let compactions: Gauge
    let compactionBlocked: Gauge
}

private func runAutoCompactor(
    path: String, options: ConnectionOptions, intervalNanoseconds: Int64, pagesPerStep: Int,
    access: FileAccess, gauges: CompactionGauges, settled: SettledFlag,
    stop: StopSignal
) -> AutoCompactionFigures {
    var figures = AutoCompactionFigures()
    do {
        let connection = try SQLiteConnection(path: path, options: options)
        defer { connection.close() }
        var compactor = CompactorLoop(
            connection: connection, reader: try FigureReader(connection),
            step: try connection.prepare("PRAGMA incremental_vacuum(\(pagesPerStep))"),
            intervalNanoseconds: intervalNanoseconds, access: access, gauges: gauges, settled: settled)
        try compactor.run(until: stop, figures: &figures)
    } catch {
        figures.failure = error
    }
    gauges.compactionBlocked.set(0)
    return figures
}

/// The compactor thread's loop on its own connection: a look every interval, and steps back to back
/// while a compaction is under way and the file stays idle.
private struct CompactorLoop {
    let connection: SQLiteConnection
    let reader: FigureReader
    /// `PRAGMA incremental_vacuum(pagesPerStep)`.
    let step: SQLiteStatement
    let intervalNanoseconds: Int64
    let access: FileAccess
    let gauges: CompactionGauges
    let settled: SettledFlag
    /// A compaction began and has not finished (its checkpoint has not shrunk the file yet).
    var compacting = false

    /// Looks until `stop`; what it does is added to `figures` as it goes, so a failure keeps the figures so far.
    mutating func run(until stop: StopSignal, figures: inout AutoCompactionFigures) throws(VersionPinningError) {
        var next = monotonicNanoseconds()
        while true {
            next += intervalNanoseconds
            guard sleep(until: next, unless: stop) else { break }
            guard try look(figures: &figures) else { continue }
            // Steps follow each other without waiting while the file stays idle.
            next = monotonicNanoseconds() - intervalNanoseconds
        }
    }

    /// Reads the page figures and, when compaction is due and nobody accesses the file, runs one step;
    /// returns whether it did.
    private mutating func look(figures: inout AutoCompactionFigures) throws(VersionPinningError) -> Bool {
        let now = try reader.read()
        figures.peaks.note(now)
        guard
            compacting
                || CompactionRules.autoCompactionDue(totalBytes: now.totalPageBytes, usedBytes: now.usedBytes)
        else {
            gauges.compactionBlocked.set(0)
            settled.set(true)
            return false
        }
        settled.set(false)
        guard !access.isAccessed else {
            // Counted per interval: the compactor looked, found the file in use, and waits.
            figures.blockedNanoseconds += intervalNanoseconds
            gauges.compactionBlocked.set(1)
            return false
        }
        gauges.compactionBlocked.set(0)
        compacting = true
        try compactStep(from: now, figures: &figures)
        return true
    }

    /// One incremental-vacuum step while free pages are left; once none is, the checkpoint that ends the compaction.
    private mutating func compactStep(from now: DatabaseFigures, figures: inout AutoCompactionFigures)
        throws(VersionPinningError)
    {
        let start = monotonicNanoseconds()
        var after = now
        if after.freePages > 0 {
            // One step, its own transaction: SQLite moves up to pagesPerStep pages and cuts the end off.
            try step.run()
            figures.steps += 1
            after = try reader.read()
        }
        if after.freePages == 0 {
            // Done: copy the compacted pages into the file, which shrinks, and empty the WAL. A
            // reader that arrived meanwhile makes it incomplete: it is tried again when idle.
            if try connection.checkpoint(.truncate).isComplete {
                figures.compactions += 1
                gauges.compactions.increment()
                compacting = false
            }
            after = try reader.read()
        }
        figures.compactingNanoseconds += monotonicNanoseconds() - start
        figures.peaks.note(after)
        gauges.files.publish(after)
    }
}
