import Foundation
import HarnessModel
import Measurement
import Synchronization
import TestSupport
import Testing
import WorkloadKit

@testable import VersionPinningWorkload

#if canImport(Glibc)
    import Glibc
#endif

extension SQLiteWorkloadTests {
    /// 2 MiB of 1 KiB rows, then deletes: small enough for a test, large enough for hundreds of pages.
    @Suite struct Compaction {
        static let fill = ParameterValue.bytes(2 << 20)
        static let parameters: [String: ParameterValue] = [
            "rowsPerTransaction": .count(100), "launchCompactAbove": .bytes(1 << 20),
        ]

        /// Figures SQLite reports for the case's database, read through a connection of the test's own.
        static func figures(_ scratch: ScratchDirectory) throws -> (figures: DatabaseFigures, rows: Int) {
            let observer = try SQLiteConnection(path: scratch.path + "/compaction.sqlite")
            defer { observer.close() }
            return (try observer.figures(), try observer.integer("SELECT count(*) FROM items"))
        }

        /// Fills, deletes `fraction`, and returns the case with SQLite's figures right after the delete.
        static func filledAndDeleted(
            _ strategy: String, fraction: Double = 0.8, _ overrides: [String: ParameterValue] = [:],
            in scratch: ScratchDirectory
        ) throws -> (CaseUnderTest, DatabaseFigures, rows: Int) {
            let run = try CaseUnderTest(
                CompactionWorkload(), strategy: strategy, parameters.merging(overrides) { $1 }, in: scratch)
            try run.run("fill", fill)
            try run.run("delete", .fraction(fraction))
            let (figures, rows) = try figures(scratch)
            return (run, figures, rows)
        }

        @Test func neverCompactKeepsTheFreePagesInTheFile() throws {
            let scratch = try ScratchDirectory()
            let (run, afterDelete, rows) = try Self.filledAndDeleted("never-compact", in: scratch)
            try #require(afterDelete.freePages > 0, "the delete must leave free pages for this test to mean anything")
            try run.run("relaunch")
            let (final, finalRows) = try Self.figures(scratch)
            let metrics = try run.tearDown()
            expectMetrics(run.workloadCase.metrics(), declaredBy: CompactionWorkload().descriptor, complete: true)

            // After the relaunch the WAL is back in the file: its size is SQLite's page count, free pages included.
            #expect(final.databaseBytes == final.pageCount * final.pageSize)
            #expect(final.pageCount == afterDelete.pageCount)
            #expect(final.freePages == afterDelete.freePages)
            #expect(try metrics.int("finalDatabaseBytes") == final.databaseBytes)
            #expect(try metrics.int("peakDatabaseBytes") == final.databaseBytes)
            #expect(try metrics.int("compactions") == 0)
            #expect(finalRows == rows)
        }

        @Test(arguments: ["compact-on-launch", "compacted-copy"])
        func compactionAtRelaunchLeavesOnlyTheUsedPages(strategy: String) throws {
            let scratch = try ScratchDirectory()
            let (run, afterDelete, rows) = try Self.filledAndDeleted(strategy, in: scratch)
            try #require(afterDelete.freePages > 0)
            try run.run("relaunch")
            let (final, finalRows) = try Self.figures(scratch)
            let metrics = try run.tearDown()
            expectMetrics(run.workloadCase.metrics(), declaredBy: CompactionWorkload().descriptor, complete: true)

            #expect(final.freePages == 0)
            #expect(final.databaseBytes == final.pageCount * final.pageSize)
            // Rebuilding packs the rows at least as tightly as the pages that held them.
            #expect(final.pageCount <= afterDelete.pageCount - afterDelete.freePages)
            #expect(finalRows == rows)
            #expect(try metrics.int("compactions") == 1)
            #expect(try metrics.int("finalDatabaseBytes") == final.databaseBytes)
            #expect(try metrics.int("peakDatabaseBytes") > final.databaseBytes)
            #expect(try #require(metrics["compactionTime"]) > 0)
            #expect(
                try #require(metrics["launchTime"]) >= (try #require(metrics["compactionTime"])),
                "the launch waited for it")
            #expect(fileBytes(scratch.path + "/compaction.sqlite.compacted") == 0)
            let observer = try SQLiteConnection(path: scratch.path + "/compaction.sqlite")
            #expect(try observer.integer("SELECT integrity_check = 'ok' FROM pragma_integrity_check") == 1)
            observer.close()
        }

        @Test func compactOnLaunchLeavesAFileUnderTheSizeAlone() throws {
            let scratch = try ScratchDirectory()
            let (run, afterDelete, _) = try Self.filledAndDeleted(
                "compact-on-launch", ["launchCompactAbove": .bytes(1 << 40)], in: scratch)
            try run.run("relaunch")
            let (final, _) = try Self.figures(scratch)
            let metrics = try run.tearDown()

            #expect(try metrics.int("compactions") == 0)
            #expect(final.freePages == afterDelete.freePages)
            #expect(final.databaseBytes == afterDelete.pageCount * afterDelete.pageSize)
        }

        @Test func compactedCopyRefusesAnExistingDestination() throws {
            let scratch = try ScratchDirectory()
            let (run, _, _) = try Self.filledAndDeleted("compacted-copy", in: scratch)
            let destination = scratch.path + "/compaction.sqlite.compacted"
            #expect(FileManager.default.createFile(atPath: destination, contents: Data("not ours".utf8)))
            #expect(throws: VersionPinningError.copyDestinationExists(path: destination)) { try run.run("relaunch") }
            _ = try run.tearDown()
        }

        /// The seed: automatic compaction "only takes place when the file is not being accessed".
        /// A reader holding a read transaction from before the deletes keeps it from running at all:
        /// SQLite's own figures do not move; once the reader lets go, the file is compacted in the
        /// background, with no step of the app's.
        @Test func autoCompactionNeverRunsWhileAReaderIsOpen() throws {
            let scratch = try ScratchDirectory()
            let run = try CaseUnderTest(CompactionWorkload(), strategy: "auto-compact", Self.parameters, in: scratch)
            try run.run("fill", Self.fill)
            try run.run("pin")
            try run.run("delete", .fraction(0.8))
            let (afterDelete, rows) = try Self.figures(scratch)
            try #require(
                CompactionRules.autoCompactionDue(
                    totalBytes: afterDelete.totalPageBytes, usedBytes: afterDelete.usedBytes),
                "the rule must hold for this test to mean anything")
            #expect(run.gauge("readTransactions") == 1)
            // Many times the compactor's interval: it looked, found the reader, and waited.
            #expect(waitUntil(seconds: 20) { run.gauge("compactionBlocked") == 1 })
            usleep(200_000)
            let (whilePinned, _) = try Self.figures(scratch)
            #expect(
                whilePinned.pageCount == afterDelete.pageCount && whilePinned.freePages == afterDelete.freePages,
                "not a page moved while the reader was open")
            #expect(run.gauge("compactions") == 0)

            try run.run("unpin")
            try run.run("await-compaction")
            #expect(run.gauge("compactions") == 1, "compacted in the background once idle")
            let (compacted, compactedRows) = try Self.figures(scratch)
            #expect(compacted.freePages == 0)
            #expect(compacted.databaseBytes == compacted.pageCount * compacted.pageSize, "the file itself shrank")
            #expect(
                compacted.pageCount < afterDelete.pageCount - afterDelete.freePages + afterDelete.pageCount / 100 + 2,
                "no more pages than the data (and its pointer maps) needs")
            #expect(compactedRows == rows)
            #expect(run.gauge("compactionBlocked") == 0)
            let metrics = try run.tearDown()
            #expect(try metrics.int("compactions") == 1)
            #expect(
                try #require(metrics["compactionBlockedTime"]) >= 100,
                "blocked for the 200 ms the reader held on, give or take")
            #expect(try #require(metrics["compactionTime"]) > 0)
            #expect(metrics["launchTime"] == 0, "no launch waited for it")
            #expect(try metrics.int("finalFreePages") == 0)
            let observer = try SQLiteConnection(path: scratch.path + "/compaction.sqlite")
            #expect(try observer.integer("SELECT integrity_check = 'ok' FROM pragma_integrity_check") == 1)
            observer.close()
        }

        /// The deletes themselves are access: the rule holds from about two thirds deleted, but not
        /// a page is moved until the delete step is over. Watched from another connection while the
        /// deletes run: the free pages only ever grow, though the compactor already finds the rule due.
        @Test func autoCompactionWaitsForTheAppsWritesToEnd() throws {
            let scratch = try ScratchDirectory()
            // Single-row commits and a compactor that looks every 200 µs, so the delete lasts many of its
            // looks after the rule starts to hold (the last ~15% of 4,096 rows: ~600 commits) on a fast machine too.
            let run = try CaseUnderTest(
                CompactionWorkload(), strategy: "auto-compact",
                Self.parameters.merging([
                    "rowsPerTransaction": .count(1), "autoCompactInterval": .duration(nanoseconds: 200_000),
                ]) { $1 }, in: scratch)
            try run.run("fill", .bytes(4 << 20))
            let deleting = UncheckedBox(run)
            let done = DispatchSemaphore(value: 0)
            let failure = Mutex<(any Error)?>(nil)
            let thread = Thread {
                do { try deleting.value.run("delete", .fraction(0.8)) } catch { failure.withLock { $0 = error } }
                done.signal()
            }
            thread.start()
            let observer = try SQLiteConnection(path: scratch.path + "/compaction.sqlite")
            var freePages: [Int] = []
            var sawBlocked = false
            // Bounded: a delete step that never ends fails the test instead of hanging it.
            let deadline = ContinuousClock.now + .seconds(120)
            while done.wait(timeout: .now()) == .timedOut {
                try #require(ContinuousClock.now < deadline, "the delete step did not end within 120 s")
                freePages.append(try observer.figures().freePages)
                if run.gauge("compactionBlocked") == 1 { sawBlocked = true }
                usleep(500)
            }
            observer.close()
            try #require(failure.withLock { $0 } == nil)
            #expect(sawBlocked, "the rule held while the app was still deleting")
            #expect(
                zip(freePages, freePages.dropFirst()).allSatisfy { $0 <= $1 }, "no compaction step during the deletes")
            try run.run("await-compaction")
            #expect(run.gauge("compactions") == 1, "compacted once the deletes were over")
            let metrics = try run.tearDown()
            #expect(try #require(metrics["compactionBlockedTime"]) > 0)
            #expect(try metrics.int("finalFreePages") == 0)
        }

        @Test func autoCompactionLeavesAFileUnderTheRuleAlone() throws {
            let scratch = try ScratchDirectory()
            let (run, afterDelete, _) = try Self.filledAndDeleted("auto-compact", fraction: 0.5, in: scratch)
            // Half deleted: unused space about equals the data, under the rule's "twice".
            #expect(
                !CompactionRules.autoCompactionDue(
                    totalBytes: afterDelete.totalPageBytes, usedBytes: afterDelete.usedBytes))
            try run.run("await-compaction")
            let metrics = try run.tearDown()
            #expect(try metrics.int("compactions") == 0)
            #expect(try metrics.int("finalFreePages") == afterDelete.freePages)
            #expect(metrics["compactionBlockedTime"] == 0)
        }

        @Test func autoCompactionRuleIsMoreThanTwiceTheData() {
            #expect(!CompactionRules.autoCompactionDue(totalBytes: 300, usedBytes: 100))
            #expect(CompactionRules.autoCompactionDue(totalBytes: 301, usedBytes: 100))
            #expect(!CompactionRules.autoCompactionDue(totalBytes: 0, usedBytes: 0))
            #expect(!CompactionRules.autoCompactionDue(totalBytes: 100, usedBytes: 100))
        }

        @Test func launchRuleIsTheSeedsExample() {
            let hundredMB = 100 * 1024 * 1024
            func due(_ total: Int, _ used: Int) -> Bool {
                CompactionRules.launchCompactionDue(
                    totalBytes: total, usedBytes: used, totalAbove: hundredMB, usedBelow: 0.5)
            }
            #expect(due(hundredMB + 1, hundredMB / 4))
            #expect(!due(hundredMB, hundredMB / 4))  // not over the size
            #expect(!due(2 * hundredMB, hundredMB))  // exactly half used is not less than 50%
            #expect(due(2 * hundredMB, hundredMB - 1))
            #expect(!due(0, 0))
        }

        @Test func sqlStringLiteralsDoubleTheirQuotes() {
            #expect(sqlStringLiteral("/tmp/a'b.sqlite") == "'/tmp/a''b.sqlite'")
            #expect(sqlStringLiteral("plain") == "'plain'")
        }
    }
}

/// Hands a value to another thread in a test that makes sure only one thread uses it at a time.
final class UncheckedBox<Value>: @unchecked Sendable {
    // Safety: the tests using it touch `value` from one thread at a time (the other only reads gauges).
    let value: Value
    init(_ value: Value) { self.value = value }
}
