import Foundation
import HarnessModel
import HeapGraph
import Testing

@Suite struct LeakSignatureTests {
    /// One `Session` per request, each in a cycle with its `onClose` closure and holding a buffer.
    static func sessions(_ count: Int, in graph: inout GraphFixture, site: String? = "Server.handle() (main.swift:6)") {
        for _ in 0..<count {
            let session = graph.block("App.Session", bytes: 64, stack: site.map { [$0] })
            let closure = graph.block("closure #1 in Server.handle()", bytes: 32, kind: .closureContext)
            let buffer = graph.block("", bytes: 5120, kind: .arrayStorage)
            graph.edge(session, closure, "onClose", offset: 16)
            graph.edge(closure, session, "session", offset: 16)
            graph.edge(session, buffer, "buffer", offset: 24)
        }
    }

    /// A server that answered a few requests: reachable state first (the analysis sees a live block), then leaks.
    static func server(sessions count: Int, graph: inout GraphFixture) {
        let server = graph.block("App.Server")
        graph.global("App.Server.shared", server)
        sessions(count, in: &graph)
    }

    @Test func identicalGroupsAreOneRowWithTheirCountAndTotals() throws {
        var graph = GraphFixture()
        Self.server(sessions: 20, graph: &graph)
        let summary = try graph.analyse()
        #expect(summary.reachableBlocks == 1 && summary.leakedBlocks == 60)
        #expect(summary.rootCycleCount == 20 && summary.cycleCount == 20)
        let row = try #require(summary.groups.first)
        #expect(summary.groups.count == 1 && summary.omittedGroups == 0)
        #expect(row.count == 20 && row.blocks == 60 && row.bytes == 20 * (64 + 32 + 5120))
        #expect(row.rootBlocks == 2 && row.kind == .rootCycle)
        #expect(row.types.first { $0.type.name == "App.Session" }?.count == 20)
        #expect(row.cycle?.edges.map { $0.fieldName ?? "?" } == ["onClose", "session"])
        let signature = try #require(row.signature)
        #expect(signature.count == 12 && signature.allSatisfy(\.isHexDigit))
    }

    /// The same leaks in another run: other addresses, allocated in another order, among other reachable blocks.
    @Test func aSignatureIsTheSameInAnotherRunAtOtherAddresses() throws {
        var first = GraphFixture()
        Self.server(sessions: 3, graph: &first)
        let screen = first.block("App.Screen", bytes: 100)
        let subscription = first.block("App.Subscription", bytes: 40)
        first.edge(screen, subscription, "subscription")
        first.edge(subscription, screen, "owner", kind: .unowned)
        var second = GraphFixture(firstAddress: 0x7f3a_9100_0000, spacing: 0x40)
        let other = second.block("App.Subscription", bytes: 40)
        for index in 0..<50 {
            let entry = second.block("App.Entry\(index % 3)")
            second.global("App.cache\(index)", entry)
        }
        Self.sessions(2, in: &second)
        let otherScreen = second.block("App.Screen", bytes: 100)
        second.edge(otherScreen, other, "subscription", offset: 16)
        second.edge(other, otherScreen, "owner", kind: .unowned, offset: 16)
        Self.server(sessions: 5, graph: &second)
        let (before, after) = (try first.analyse(), try second.analyse())
        #expect(before.reachableBlocks == 1 && after.reachableBlocks == 51)
        func rows(_ summary: HeapCaptureSummary) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: summary.groups.map { ($0.signature ?? "none", $0.count) })
        }
        #expect(before.groups.count == 2 && after.groups.count == 2)
        #expect(Set(rows(before).keys) == Set(rows(after).keys))
        #expect(rows(before).values.sorted() == [1, 3] && rows(after).values.sorted() == [1, 7])
    }

    @Test func anotherFieldOrAllocationSiteIsAnotherSignature() throws {
        var graph = GraphFixture()
        Self.server(sessions: 4, graph: &graph)
        Self.sessions(2, in: &graph, site: "Server.upgrade() (main.swift:30)")
        Self.sessions(3, in: &graph, site: nil)
        for _ in 0..<5 {
            let session = graph.block("App.Session", bytes: 64, stack: ["Server.handle() (main.swift:6)"])
            let closure = graph.block("closure #1 in Server.handle()", bytes: 32, kind: .closureContext)
            graph.edge(session, closure, "onError")
            graph.edge(closure, session, "session")
        }
        let summary = try graph.analyse()
        #expect(summary.rootCycleCount == 14)
        #expect(summary.groups.map(\.count).sorted() == [2, 3, 4, 5])
        #expect(Set(summary.groups.compactMap(\.signature)).count == 4)
    }

    /// An unnamed collection's references are element slots: a cycle through different slots is the same leak.
    @Test func aCollectionsSlotsDoNotSplitALeak() throws {
        var graph = GraphFixture()
        let root = graph.block("App.Root")
        graph.global("App.root", root)
        for slot in 0..<6 {
            let node = graph.block("App.Node")
            let children = graph.block("", bytes: 256, kind: .arrayStorage)
            graph.edge(node, children, "children")
            graph.edge(children, node, nil, offset: 32 + 8 * slot)
        }
        let summary = try graph.analyse()
        #expect(summary.leakedBlocks == 12 && summary.groups.map(\.count) == [6])
    }

    @Test func aGroupWrittenBeforeSignaturesDecodesAsOneGroup() throws {
        let group = HeapLeakGroup(
            kind: .rootLeak, signature: "0123456789ab", count: 4, blocks: 4, bytes: 64, rootBlocks: 1,
            rootType: .object("App.A"), types: [])
        let encoded = try JSONEncoder().encode(group)
        var object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(object["signature"] as? String == "0123456789ab" && object["count"] as? Int == 4)
        object["signature"] = nil
        object["count"] = nil
        let old = try JSONDecoder().decode(HeapLeakGroup.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.count == 1 && old.signature == nil && old.blocks == 4 && old.rootType == .object("App.A"))
        #expect(try JSONDecoder().decode(HeapLeakGroup.self, from: encoded) == group)
    }
}
