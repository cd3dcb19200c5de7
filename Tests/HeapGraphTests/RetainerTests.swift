import Foundation
import HarnessModel
import HeapGraph
import Testing

@Suite struct RetainerTests {
    /// No share threshold: the small rows are listed too.
    static var everyRow: HeapGraphLimits {
        var limits = HeapGraphLimits()
        limits.minimumRetainerShare = 0
        return limits
    }

    /// global -> `App.Cache` -> dictionary storage -> `App.Entry` x`count` -> 10 KiB array storage each; beside it a
    /// global `App.Log` holding one 1 KiB buffer that the first entry references too (shared: the cache does not
    /// retain it), and a weak reference from the log to the cache (never retaining).
    static func cache(count: Int) -> (graph: GraphFixture, cacheBytes: Int) {
        var graph = GraphFixture()
        let cache = graph.block("App.Cache", bytes: 64)
        let storage = graph.block("", bytes: 4096, kind: .dictionaryStorage)
        let log = graph.block("App.Log", bytes: 32)
        let shared = graph.block("", bytes: 1024, kind: .arrayStorage)
        graph.global("App.Cache.shared", cache)
        graph.global("App.Log.shared", log)
        graph.edge(cache, storage, "entries")
        graph.edge(log, shared, "lines")
        graph.edge(log, cache, "cache", kind: .weak, offset: 24)
        var bytes = 64 + 4096
        for index in 0..<count {
            let entry = graph.block("App.Entry", bytes: 48, stack: ["App.Cache.insert(_:) (Cache.swift:12)"])
            let buffer = graph.block("", bytes: 10_240, kind: .arrayStorage)
            graph.edge(storage, entry, offset: 32 + 8 * index)
            graph.edge(entry, buffer, "bytes")
            if index == 0 { graph.edge(entry, shared, "log", offset: 24) }
            bytes += 48 + 10_240
        }
        return (graph, bytes)
    }

    @Test func theCacheRetainsExactlyItsOwnBlocksAndNotWhatItSharesOrWhatHoldsItWeakly() throws {
        let (graph, cacheBytes) = Self.cache(count: 300)
        let summary = try graph.analyse(limits: Self.everyRow)
        let retainers = try #require(summary.retainers)
        // The probe: the analysis sees every block as reachable (nothing leaked), so a wrong answer would be visible.
        #expect(summary.reachableBlocks == 4 + 600 && summary.leakedBlocks == 0)
        #expect(retainers.reachableBytes == summary.reachableBytes)
        let top = try #require(retainers.rows.first)
        #expect(top.retainedBytes == cacheBytes)
        #expect(top.nodes.map(\.type.name) == ["App.Cache", "", "App.Entry", ""])
        #expect(top.nodes.map(\.type.kind) == [.swiftObject, .dictionaryStorage, .swiftObject, .arrayStorage])
        #expect(top.nodes.map(\.count) == [1, 1, 300, 300])
        #expect(top.nodes.map(\.fieldName) == [nil, "entries", nil, "bytes"])
        #expect(top.firstRetainingNode == 0)
        #expect(top.root?.description == "App.Cache.shared")
        #expect(top.allocationStack == ["App.Cache.insert(_:) (Cache.swift:12)"])
        // The shared buffer is held by the log and by an entry: only the virtual root dominates it.
        let log = try #require(retainers.rows.first { $0.nodes.first?.type.name == "App.Log" })
        #expect(log.retainedBytes == 32)
    }

    @Test func aDiamondIsRetainedByWhereItsChainsMeet() throws {
        var graph = GraphFixture()
        let top = graph.block("App.Top", bytes: 16)
        let left = graph.block("App.Left", bytes: 100)
        let right = graph.block("App.Right", bytes: 200)
        let bottom = graph.block("App.Bottom", bytes: 100_000)
        graph.global("App.top", top)
        graph.edge(top, left, "left")
        graph.edge(top, right, "right", offset: 24)
        graph.edge(left, bottom, "next")
        graph.edge(right, bottom, "next")
        let rows = try #require(try graph.analyse(limits: Self.everyRow).retainers).rows
        // Top holds all of it; Bottom, which neither side holds alone, continues Top's chain (it retains 99.7%).
        #expect(rows.first?.retainedBytes == 100_316)
        #expect(rows.first?.nodes.map(\.type.name) == ["App.Top", "App.Bottom"])
        #expect(rows.first?.nodes.last?.fieldName == nil)
        #expect(rows.dropFirst().map(\.retainedBytes).sorted() == [100, 200])
    }

    @Test func aLinkedListIsOneNodeAndACycleAmongReachableBlocksIsRetainedOnce() throws {
        var graph = GraphFixture()
        let head = graph.block("App.Node", bytes: 32)
        graph.global("App.list", head)
        var previous = head
        for _ in 1..<10_000 {
            let next = graph.block("App.Node", bytes: 32)
            graph.edge(previous, next, "next")
            previous = next
        }
        // The tail points back at the head: a reachable cycle, retained once.
        graph.edge(previous, head, "next")
        let rows = try #require(try graph.analyse().retainers).rows
        #expect(rows.count == 1)
        #expect(rows.first?.nodes.map(\.count) == [10_000])
        #expect(rows.first?.retainedBytes == 320_000)
    }

    @Test func rowsAreBoundedAndTheRestCounted() throws {
        var graph = GraphFixture()
        for index in 0..<30 {
            let block = graph.block("App.Item\(index)", bytes: 1000 + index)
            graph.global("App.item\(index)", block)
        }
        var limits = HeapGraphLimits()
        limits.maximumRetainers = 5
        let retainers = try #require(try graph.analyse(limits: limits).retainers)
        #expect(retainers.rows.map(\.retainedBytes) == [1029, 1028, 1027, 1026, 1025])
        #expect(retainers.omittedRows == 25)
    }

    @Test func aSummaryWrittenBeforeRetainersDecodes() throws {
        var summary = try Self.cache(count: 3).graph.analyse()
        summary.retainers = nil
        let old = try JSONEncoder().encode(HeapGraphSummary(captures: [summary]))
        let text = try #require(String(data: old, encoding: .utf8))
        #expect(!text.contains("retainers") && !text.contains("\"peak\""))
        let decoded = try JSONDecoder().decode(HeapGraphSummary.self, from: old)
        #expect(decoded.captures.first?.retainers == nil && decoded.peak == nil)
    }
}
