import Foundation
import Measurement
import WorkloadKit
import HarnessModel
import Testing
@testable import VersionPinningWorkload

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
        static func filledAndDeleted(_ strategy: String, fraction: Double = 0.8, _ overrides: [String: ParameterValue] = [:],
                                     in scratch: ScratchDirectory) throws -> (CaseUnderTest, DatabaseFigures, rows: Int) {
            let run = try CaseUnderTest(CompactionWorkload(), strategy: strategy, parameters.merging(overrides) { $1 }, in: scratch)
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

            #expect(final.freePages == 0)
            #expect(final.databaseBytes == final.pageCount * final.pageSize)
            // Rebuilding packs the rows at least as tightly as the pages that held them.
            #expect(final.pageCount <= afterDelete.pageCount - afterDelete.freePages)
            #expect(finalRows == rows)
            #expect(try metrics.int("compactions") == 1)
            #expect(try metrics.int("finalDatabaseBytes") == final.databaseBytes)
            #expect(try metrics.int("peakDatabaseBytes") > final.databaseBytes)
            #expect(try #require(metrics["compactionTime"]) > 0)
            #expect(fileBytes(scratch.path + "/compaction.sqlite.compacted") == 0)
            let observer = try SQLiteConnection(path: scratch.path + "/compaction.sqlite")
            #expect(try observer.integer("SELECT integrity_check = 'ok' FROM pragma_integrity_check") == 1)
            observer.close()
        }

        @Test func compactOnLaunchLeavesAFileUnderTheSizeAlone() throws {
            let scratch = try ScratchDirectory()
            let (run, afterDelete, _) = try Self.filledAndDeleted("compact-on-launch", ["launchCompactAbove": .bytes(1 << 40)], in: scratch)
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

        @Test(arguments: [(fraction: 0.5, compacts: false), (fraction: 0.8, compacts: true)])
        func autoCompactFollowsTheTwiceTheDataRule(fraction: Double, compacts: Bool) throws {
            let scratch = try ScratchDirectory()
            let (run, afterDelete, rows) = try Self.filledAndDeleted("auto-compact", fraction: fraction, in: scratch)
            let metrics = try run.tearDown()
            let compactions = try metrics.int("compactions")

            // Whatever happened, the rule no longer holds once the deletes are done.
            #expect(!CompactionRules.autoCompactionDue(totalBytes: afterDelete.totalPageBytes, usedBytes: afterDelete.usedBytes))
            #expect(try metrics.int("finalRows") == rows)
            if compacts {
                #expect(compactions == 1)
                #expect(try metrics.int("peakDatabaseBytes") > afterDelete.totalPageBytes)
                // It compacted mid-delete (at about two thirds deleted): the rows deleted after that left free pages.
                #expect(afterDelete.freePages > 0)
            } else {
                // Half deleted: unused space about equals the data, under the rule's "twice".
                #expect(compactions == 0)
                #expect(afterDelete.freePages * 3 > afterDelete.pageCount)
            }
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
                CompactionRules.launchCompactionDue(totalBytes: total, usedBytes: used, totalAbove: hundredMB, usedBelow: 0.5)
            }
            #expect(due(hundredMB + 1, hundredMB / 4))
            #expect(!due(hundredMB, hundredMB / 4))          // not over the size
            #expect(!due(2 * hundredMB, hundredMB))          // exactly half used is not less than 50%
            #expect(due(2 * hundredMB, hundredMB - 1))
            #expect(!due(0, 0))
        }

        @Test func sqlStringLiteralsDoubleTheirQuotes() {
            #expect(sqlStringLiteral("/tmp/a'b.sqlite") == "'/tmp/a''b.sqlite'")
            #expect(sqlStringLiteral("plain") == "'plain'")
        }
    }
}
