import CSQLite
import HarnessModel
import Measurement
import Testing
import WorkloadKit

@testable import VersionPinningWorkload

extension SQLiteWorkloadTests {
    /// Bursts short enough for a test: the writer commits single-row updates as fast as 5000 a
    /// second allows, and checkpoints at 10 frames, so a pinned WAL passes that many times over.
    @Suite struct VersionPinning {
        static let checkpointFrames = 10
        static let rowsPerCommit = 1
        static let parameters: [String: ParameterValue] = [
            "rows": .count(300), "writeRate": .rate(perSecond: 5000), "rowsPerCommit": .count(rowsPerCommit),
            "readRate": .rate(perSecond: 50), "checkpointFrames": .count(checkpointFrames),
            "blockedShare": .fraction(0.3),
        ]
        static let burst = ParameterValue.duration(nanoseconds: 500_000_000)
        /// Most frames a WAL can hold when every checkpoint completes: it restarts at the first write
        /// after a complete checkpoint, which runs once a commit leaves `checkpointFrames` frames.
        static let unpinnedFrameBound = checkpointFrames - 1 + rowsPerCommit

        /// A burst's metrics, and what SQLite itself says about the WAL after it (through a connection
        /// of the test's own: a PASSIVE checkpoint reports the frames in the WAL).
        struct Burst {
            var metrics: [String: Double]
            var wal: CheckpointResult
            var walBytes: Int
            var pageSize: Int
        }

        static func burst(_ strategy: String) throws -> Burst {
            let scratch = try ScratchDirectory()
            let run = try CaseUnderTest(VersionPinningWorkload(), strategy: strategy, parameters, in: scratch)
            try run.run("burst", burst)
            let observer = try SQLiteConnection(path: scratch.path + "/version-pinning.sqlite")
            let pageSize = try observer.integer("PRAGMA page_size")
            let wal = try observer.checkpoint(.passive)
            observer.close()
            let walBytes = fileBytes(scratch.path + "/version-pinning.sqlite-wal")
            return Burst(metrics: try run.tearDown(), wal: wal, walBytes: walBytes, pageSize: pageSize)
        }

        @Test func pinnedReaderKeepsEveryCommitInTheWAL() throws {
            let pinned = try Self.burst("pinned-reader")
            let metrics = pinned.metrics

            let commits = try metrics.int("commits")
            try #require(commits > 10 * Self.checkpointFrames, "too few commits to tell pinned from unpinned")
            // The WAL never restarted: every commit's frame is still there, and the file holds them all.
            #expect(pinned.wal.logFrames >= commits)
            #expect(pinned.walBytes == walFileBytes(frames: pinned.wal.logFrames, pageSize: pinned.pageSize))
            #expect(try metrics.int("peakWalBytes") == pinned.walBytes)
            #expect(try metrics.int("walBytesAfterBurst") == pinned.walBytes)
            // Every checkpoint the writer ran while the reader held its snapshot stopped short.
            #expect(try metrics.int("checkpoints") > 0)
            #expect(try metrics.int("incompleteCheckpoints") == metrics.int("checkpoints"))
            #expect(try metrics.int("readTransactions") == 1)
        }

        /// The file is the database and its WAL: a pin that holds for the whole burst grows it by
        /// every commit's frames, and a truncating checkpoint afterwards does not hide that it grew.
        @Test func pinnedReaderGrowsTheFileByEveryCommitAndTheGrowthOutlivesATruncatingCheckpoint() throws {
            let scratch = try ScratchDirectory()
            let run = try CaseUnderTest(
                VersionPinningWorkload(), strategy: "pinned-reader", Self.parameters, in: scratch)
            let databaseBytes = fileBytes(scratch.path + "/version-pinning.sqlite")
            #expect(
                fileBytes(scratch.path + "/version-pinning.sqlite-wal") == 0, "every strategy starts from an empty WAL")
            try run.run("burst", Self.burst)
            let walAfterBurst = fileBytes(scratch.path + "/version-pinning.sqlite-wal")
            #expect(run.gauge("fileBytes") == databaseBytes + walAfterBurst)
            try run.run("checkpoint", .choice("truncate"))
            let metrics = try run.tearDown()

            let commits = try metrics.int("commits")
            // The database file keeps its size while pinned; all the growth is the WAL's.
            #expect(try metrics.int("fileGrowth") == walAfterBurst)
            #expect(try metrics.int("peakFileBytes") == databaseBytes + walAfterBurst)
            // Each single-row commit appends its page (one frame) to the WAL, and none is recycled.
            let pageSize = 4096
            #expect(try metrics.int("fileGrowthPerCommit") >= pageSize)
            #expect(try metrics.int("fileGrowth") >= walFileBytes(frames: commits, pageSize: pageSize))
            // The checkpoint gave the space back: the final file is the database alone, yet the growth stays reported.
            #expect(try metrics.int("finalWalBytes") == 0)
            #expect(try metrics.int("finalFileBytes") == fileBytes(scratch.path + "/version-pinning.sqlite"))
        }

        @Test func withoutAPinTheFileGrowsByTheCheckpointThresholdAtMost() throws {
            let noReader = try Self.burst("no-reader")
            let refreshing = try Self.burst("refreshing-reader")
            let bound = walFileBytes(frames: Self.unpinnedFrameBound, pageSize: noReader.pageSize)
            #expect(try noReader.metrics.int("fileGrowth") <= bound)
            #expect(try noReader.metrics.int("finalFileBytes") <= noReader.metrics.int("peakDatabaseBytes") + bound)
            #expect(try refreshing.metrics.int("readTransactions") > 1)
            #expect(
                try refreshing.metrics.int("fileGrowth") * 4 < Self.burst("pinned-reader").metrics.int("fileGrowth"))
        }

        @Test func withoutAPinTheWALStaysAtTheCheckpointThreshold() throws {
            let pinned = try Self.burst("pinned-reader").metrics
            let refreshing = try Self.burst("refreshing-reader").metrics
            let noReader = try Self.burst("no-reader")

            // The pinned run is the probe: it shows growth past the bound before the others are held to it.
            try #require(try pinned.int("peakWalFrames") > 10 * Self.unpinnedFrameBound)
            // With no reader every checkpoint completes and the WAL restarts: never past the bound.
            #expect(try noReader.metrics.int("peakWalFrames") <= Self.unpinnedFrameBound)
            #expect(
                try noReader.metrics.int("peakWalBytes")
                    <= walFileBytes(frames: Self.unpinnedFrameBound, pageSize: noReader.pageSize))
            #expect(try noReader.metrics.int("incompleteCheckpoints") == 0)
            // A short read can delay a restart by a commit or two, never by the whole burst.
            #expect(try refreshing.int("peakWalBytes") * 4 < pinned.int("peakWalBytes"))
            #expect(try refreshing.int("readTransactions") > 1)
        }

        @Test func blockedReaderStopsTheGrowthButNotTheFile() throws {
            let blocked = try Self.burst("blocked-reader")
            let metrics = blocked.metrics

            // While blocked, the reader pinned the WAL and it grew well past the unpinned bound...
            let peakFrames = try metrics.int("peakWalFrames")
            try #require(peakFrames > 10 * Self.unpinnedFrameBound)
            #expect(try metrics.int("peakWalBytes") == walFileBytes(frames: peakFrames, pageSize: blocked.pageSize))
            // ...once released, the WAL restarted: the frames in use are far fewer than the file holds...
            #expect(blocked.wal.logFrames * 4 < peakFrames)
            // ...and the file did not shrink by itself.
            #expect(try blocked.walBytes == metrics.int("peakWalBytes"))
            #expect(try metrics.int("fileGrowth") == metrics.int("peakWalBytes"))
        }

        @Test func truncateCheckpointGivesTheSpaceBack() throws {
            let scratch = try ScratchDirectory()
            let pinned = try CaseUnderTest(
                VersionPinningWorkload(), strategy: "pinned-reader", Self.parameters, in: scratch)
            try pinned.run("burst", Self.burst)
            let walPath = scratch.path + "/version-pinning.sqlite-wal"
            try #require(fileBytes(walPath) > 0)
            #expect(pinned.gauge("walBytes") == fileBytes(walPath))

            try pinned.run("checkpoint", .choice("truncate"))
            #expect(fileBytes(walPath) == 0)
            #expect(pinned.gauge("walBytes") == 0)
            let metrics = try pinned.tearDown()
            #expect(try metrics.int("stepCheckpointBusy") == 0)
            #expect(try metrics.int("finalWalBytes") == 0)
            #expect(try metrics.int("peakWalBytes") > 0)
        }

        @Test func aHeldReadTransactionMakesATruncateCheckpointBusy() throws {
            let scratch = try ScratchDirectory()
            let path = scratch.path + "/pin.sqlite"
            let writer = try SQLiteConnection(path: path, busyTimeout: .milliseconds(10))
            try writer.execute("CREATE TABLE t(x BLOB); INSERT INTO t VALUES (randomblob(100))")
            let reader = try SQLiteConnection(path: path)
            try reader.execute("BEGIN")
            #expect(try reader.integer("SELECT count(*) FROM t") == 1)
            try writer.execute("INSERT INTO t VALUES (randomblob(5000))")

            let pinned = try writer.checkpoint(.truncate)
            #expect(pinned.busy)
            #expect(pinned.checkpointedFrames < pinned.logFrames)
            #expect(fileBytes(path + "-wal") > 0)

            try reader.execute("COMMIT")
            let released = try writer.checkpoint(.truncate)
            #expect(!released.busy)
            #expect(released.isComplete)
            #expect(fileBytes(path + "-wal") == 0)
            reader.close()
            writer.close()
        }

        @Test func tearDownReleasesEverythingSQLiteAllocated() throws {
            let before = sqlite3_memory_used()
            let scratch = try ScratchDirectory()
            let run = try CaseUnderTest(
                VersionPinningWorkload(), strategy: "pinned-reader", Self.parameters, in: scratch)
            try run.run("burst", .duration(nanoseconds: 50_000_000))
            // The probe sees the case: its main connection's page cache is live.
            #expect(sqlite3_memory_used() > before)
            _ = try run.tearDown()
            #expect(sqlite3_memory_used() == before)
        }
    }
}
