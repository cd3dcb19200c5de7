import Foundation
import HarnessModel
import Testing

@testable import Runner

/// Where a server's round or step boundary is read in its sample stream: once it has been quiet, so that the
/// connections the load client just closed are not counted live; and the stream read as it grows.
struct ServerBoundaryTests {
    /// A row at `time` ms with `live` bytes after `calls` allocation calls.
    static func row(_ time: Int64, live: Int64, calls: Int64) -> ProgramSamples.Row {
        ProgramSamples.Row(
            time: time * 1_000_000, stats: AllocatorStatsValues(), rss: 0, mallocCount: 0,
            exact: ExactCounts(liveBytes: live, allocationCalls: calls, allocatedBytes: calls * 64))
    }

    static let ms: Int64 = 1_000_000

    @Test func theBoundaryWaitsUntilTheServerIsQuiet() {
        // The round ends at 10 ms: the server frees its connections until 13 ms (28 KiB), then makes no allocation.
        let rows = [
            Self.row(9, live: 1_500_000, calls: 900), Self.row(10, live: 1_487_000, calls: 910),
            Self.row(11, live: 1_470_000, calls: 915), Self.row(12, live: 1_460_000, calls: 915),
            Self.row(13, live: 1_459_000, calls: 915), Self.row(14, live: 1_459_000, calls: 915),
            Self.row(15, live: 1_459_000, calls: 915), Self.row(16, live: 1_459_000, calls: 915),
            Self.row(17, live: 1_459_000, calls: 915), Self.row(18, live: 1_459_000, calls: 915),
        ]
        // The first row past the boundary still holds the closing connections; the quiet one 5 ms later does not.
        let index = ServerSession.quietIndex(
            in: rows, after: 10 * Self.ms, quiet: 5 * Self.ms, giveUpAfter: 200 * Self.ms)
        #expect(index == 9 && rows[9].exact?.liveBytes == 1_459_000)
        // Not quiet long enough yet: wait for more rows.
        #expect(
            ServerSession.quietIndex(
                in: Array(rows.prefix(8)), after: 10 * Self.ms, quiet: 5 * Self.ms, giveUpAfter: 200 * Self.ms) == nil)
        // An allocation with a free of the same size is activity too: the quiet starts again after it.
        var busy = rows
        busy[6] = Self.row(15, live: 1_459_000, calls: 916)
        #expect(
            ServerSession.quietIndex(in: busy, after: 10 * Self.ms, quiet: 5 * Self.ms, giveUpAfter: 200 * Self.ms)
                == nil)
    }

    @Test func aServerThatIsNeverQuietIsReadAtTheFirstSampleOnceTheWaitIsOver() {
        // An allocation every millisecond: past the wait, the first row after the boundary counts.
        let rows = (0..<40).map { Self.row(Int64($0), live: 1_000 + Int64($0), calls: Int64($0)) }
        #expect(
            ServerSession.quietIndex(in: rows, after: 5 * Self.ms, quiet: 5 * Self.ms, giveUpAfter: 30 * Self.ms) == 5)
        #expect(
            ServerSession.quietIndex(
                in: Array(rows.prefix(20)), after: 5 * Self.ms, quiet: 5 * Self.ms, giveUpAfter: 30 * Self.ms) == nil)
    }

    @Test func theStreamIsReadAsItGrowsAndALineBeingWrittenWaits() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("boundary-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/samples.1"
        let tail = SampleStreamTail(path: path)
        #expect(!tail.refresh())
        let line = { (time: Int) in "s \(time) 1 2 3 4 5 6 7 8 9 100 \(time) 640 100\n" }
        try ("memharness-agent-samples 1\n" + line(1) + line(2)).write(toFile: path, atomically: false, encoding: .utf8)
        #expect(tail.refresh() && tail.samples.rows.map(\.time) == [1, 2])
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        // Half a line: not a row until its newline is written.
        let third = line(3)
        try handle.write(contentsOf: Data(third.prefix(9).utf8))
        #expect(tail.refresh() && tail.samples.rows.map(\.time) == [1, 2])
        try handle.write(contentsOf: Data(third.dropFirst(9).utf8) + Data(line(4).utf8))
        try handle.close()
        #expect(tail.refresh() && tail.samples.rows.map(\.time) == [1, 2, 3, 4])
        #expect(tail.samples.rows.last?.exact == ExactCounts(liveBytes: 100, allocationCalls: 4, allocatedBytes: 640))
        // The same rows as reading the whole stream at once.
        #expect(try ProgramSamples.read(path)?.rows == tail.samples.rows)
    }
}
