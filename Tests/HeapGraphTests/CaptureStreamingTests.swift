import Foundation
import HarnessModel
import HeapGraph
import Testing
import WorkloadKit

/// The memory-lean path from a capture file to a snapshot: the file read in chunks, rows taken as they come when
/// already in canonical order, sizes in 32 bits and stack indices only where there is one. Each is checked against
/// the plain path it replaces, which gives the same answer.
@Suite struct CaptureStreamingTests {
    /// A capture of `blocks` blocks 64 bytes apart, each referring to the next two (where there are), one global root.
    private static func captureBytes(blocks: Int, swapFirstTwo: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = Array("memharness-agent-capture 2\n".utf8)
        func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        u32(0)  // flags
        u64(42)  // time
        u32(0)  // threads signalled
        u32(0)  // threads not stopped
        bytes += Array("streamed".utf8) + [UInt8](repeating: 0, count: 64 - 8)
        u64(0)  // modules
        u64(0)  // segments
        u64(0)  // threads
        u64(1)  // roots: a global in module 0 at 0x5000, pointing at block 0
        u32(1)
        u32(0)
        u64(0x5000)
        u64(0)
        u64(UInt64(blocks))
        for index in 0..<blocks {
            let swapped = swapFirstTwo && index < 2 ? 1 - index : index
            u64(0x10_0000 + UInt64(swapped) * 64)
            u64(index == 3 ? 5 << 30 : 64)  // one block of 5 GiB: its size does not fit in 32 bits
            u64(UInt64(index))  // first word: a small integer, no type
            u64(0)
            u64(0)
        }
        let edges = (0..<blocks).flatMap { from in [from + 1, from + 2].filter { $0 < blocks }.map { (from, $0) } }
        u64(UInt64(edges.count))
        for (from, to) in edges {
            u32(UInt32(from))
            u32(UInt32(to))
            u64(to == from + 1 ? 16 : 24)
        }
        u64(0)  // stacks
        return bytes
    }

    /// A file of another kind, of the old format, or not of the agent is refused at its first line, saying what it is.
    @Test(arguments: [
        ("memharness-agent-record 1\nend\n", "a memharness agent record file, not its capture"),
        ("MHHEAP01\u{1}\u{0}\u{0}\u{0}", "capture of version 1 (expected 'memharness-agent-capture 2')"),
        ("memharness-agent-capture 3\n", "capture of version 3"),
        ("heap_v2/524288\n", "not a file of the memharness agent"),
    ])
    func aWrongOrOldFileIsAClearError(head: String, says: String) throws {
        let bytes = Array(head.utf8) + [UInt8](repeating: 0, count: 200)
        let error = try #require(throws: CaptureFileError.self) {
            try bytes.withUnsafeBytes { try CaptureFile(bytes: $0) }
        }
        #expect(error.description.contains(says), "\(error)")
        // The capture the streaming tests make is read (the check can pass).
        _ = try Self.captureBytes(blocks: 2).withUnsafeBytes { try CaptureFile(bytes: $0) }
    }

    @Test func aCaptureReadInChunksFromItsFileGivesWhatItsBytesGive() throws {
        // 30,000 blocks and 59,997 edges: 2.2 MB, more than two of the reader's 1 MiB chunks.
        let bytes = Self.captureBytes(blocks: 30_000)
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("capture-streaming-\(UInt32.random(in: 0...UInt32.max)).heap").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try CaptureFile(path: path)
        let fromBytes = try bytes.withUnsafeBytes { try CaptureFile(bytes: $0) }
        #expect(fromFile.blockCount == 30_000 && fromFile.edgeCount == 59_997 && fromFile.label == "streamed")
        var fileBlocks: [CaptureFile.Block] = []
        var byteBlocks: [CaptureFile.Block] = []
        try fromFile.forEachBlock { fileBlocks.append($0) }
        try fromBytes.forEachBlock { byteBlocks.append($0) }
        #expect(fileBlocks.count == 30_000 && fileBlocks == byteBlocks)
        #expect(fileBlocks.last?.address == 0x10_0000 + 29_999 * 64)
        var fileEdges: [UInt64] = []
        var byteEdges: [UInt64] = []
        try fromFile.forEachEdge { from, to, offset in fileEdges.append(UInt64(from) << 32 | UInt64(to) << 8 | offset) }
        try fromBytes.forEachEdge { from, to, offset in byteEdges.append(UInt64(from) << 32 | UInt64(to) << 8 | offset)
        }
        #expect(fileEdges.count == 59_997 && fileEdges == byteEdges)

        var naming = CaptureNaming(capture: fromFile, memory: .none)
        let snapshot = try naming.snapshot()
        #expect(snapshot.blockCount == 30_000 && snapshot.edgeCount == 59_997)
        #expect(snapshot.sizes[3] == 5 << 30 && snapshot.sizes[4] == 64)
        #expect(snapshot.edgeStart[1] == 2 && snapshot.edgeTargets[0] == 1 && snapshot.edgeByteOffsets[1] == 24)
        let summary = HeapAnalysis.analyse(snapshot).summary
        #expect(summary.reachableBlocks == 30_000 && summary.leakedBlocks == 0)
        // Without the process's memory its blocks are named from its files only, and the summary says so.
        #expect(summary.naming?.source == .filesOnly)
        #expect(summary.naming?.unnamed.map(\.reason) == [.processMemoryUnavailable])
        #expect(summary.liveBytes == 29_999 * 64 + 5 << 30)
    }

    @Test func blocksOutOfAddressOrderAreRefusedSayingWhere() throws {
        let bytes = Self.captureBytes(blocks: 10, swapFirstTwo: true)
        let capture = try bytes.withUnsafeBytes { try CaptureFile(bytes: $0) }
        var seen = 0
        #expect(throws: CaptureFileError.self) { try capture.forEachBlock { _ in seen += 1 } }
        #expect(seen == 1)
    }

    @Test func rowsGivenInCanonicalOrderGiveTheSnapshotTheSortedPathGives() throws {
        var graph = GraphFixture()
        let blocks = (0..<200).map { graph.block("App.T\($0 % 7)", bytes: 32 + $0) }
        var generator = SeededRandom(seed: 5)
        var edges: [(UInt32, UInt32, Int)] = []
        for from in blocks {
            for offset in stride(from: 16, to: 64, by: 8) where Bool.random(using: &generator) {
                edges.append((from, blocks[Int.random(in: 0..<blocks.count, using: &generator)], offset))
            }
        }
        graph.global("App.head", blocks[0])
        var inOrder = graph
        var shuffled = graph
        for (from, to, offset) in edges { inOrder.edge(from, to, "f\(offset)", offset: offset) }
        for (from, to, offset) in edges.shuffled(using: &generator) {
            shuffled.edge(from, to, "f\(offset)", offset: offset)
        }
        let taken = try inOrder.snapshot()
        let sorted = try shuffled.snapshot()
        #expect(edges.count > 300)
        #expect(Array(taken.edgeStart) == Array(sorted.edgeStart))
        #expect(Array(taken.edgeTargets) == Array(sorted.edgeTargets))
        #expect(Array(taken.edgeByteOffsets) == Array(sorted.edgeByteOffsets))
        #expect(
            (0..<taken.edgeCount).map(taken.fieldName(ofEdge:)) == (0..<sorted.edgeCount).map(sorted.fieldName(ofEdge:))
        )
    }

    @Test func sizesPast32BitsAndSparseStacksReadBackExactly() throws {
        var graph = GraphFixture()
        let small = graph.block("App.Small", bytes: 48)
        let huge = graph.block("App.Huge", bytes: 6 << 30, stack: ["makeHuge()"])
        let edge = graph.block("App.Edge", bytes: Int(UInt32.max) - 1, stack: ["makeEdge()"])
        let exact = graph.block("App.Exact", bytes: Int(UInt32.max))
        let snapshot = try graph.snapshot()
        #expect(Array(snapshot.sizes) == [48, 6 << 30, UInt64(UInt32.max) - 1, UInt64(UInt32.max)])
        #expect(snapshot.stack(ofBlock: Int(small)) == nil && snapshot.stack(ofBlock: Int(exact)) == nil)
        #expect(snapshot.stack(ofBlock: Int(huge)) == ["makeHuge()"])
        #expect(snapshot.stack(ofBlock: Int(edge)) == ["makeEdge()"])
        #expect(snapshot.stackIndices.count == 4)
    }
}
