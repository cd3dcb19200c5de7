import HarnessModel
import HeapGraph
import Testing

/// A block that is no object is named by where it was allocated: the first frame of its stack.
@Suite struct AllocationSiteNamingTests {
    /// Two stacks that start at one site are one tally; another site of the same size, and a block without a stack,
    /// are tallies of their own. A named type never carries a site.
    @Test func unnamedBlocksAreToldApartByTheirSite() throws {
        var graph = GraphFixture()
        let kept = graph.block("App.Cache", bytes: 64, stack: ["App.Cache.init() (Cache.swift:4)"])
        graph.global("App.Cache.shared", kept)
        for caller in ["main (main.swift:2)", "App.run() (App.swift:9)"] {
            let buffer = graph.block(
                "", bytes: 4096, kind: .unknown, stack: ["App.Cache.grow() (Cache.swift:12)", caller])
            graph.edge(kept, buffer)
        }
        let other = graph.block("", bytes: 4096, kind: .unknown, stack: ["sqlite3MemMalloc"])
        graph.edge(kept, other)
        let bare = graph.block("", bytes: 4096, kind: .unknown)
        graph.edge(kept, bare)
        let census = HeapTypeCensus(try graph.snapshot())
        let grown = HeapTypeName(
            name: "", kind: .unknown, unnamedBlockBytes: 4096, allocationSite: "App.Cache.grow() (Cache.swift:12)")
        let byType = Dictionary(uniqueKeysWithValues: census.tallies.map { ($0.type, $0.count) })
        #expect(byType[grown] == 2)
        #expect(
            byType[HeapTypeName(name: "", kind: .unknown, unnamedBlockBytes: 4096, allocationSite: "sqlite3MemMalloc")]
                == 1)
        #expect(byType[HeapTypeName(name: "", kind: .unknown, unnamedBlockBytes: 4096)] == 1)
        #expect(byType[.object("App.Cache")] == 1 && census.tallies.count == 4)
        #expect(HeapTypeName(name: "App.Cache", kind: .swiftObject, allocationSite: "x").allocationSite == nil)
    }

    /// A leaked buffer's group and a path's last node name it by its site.
    @Test func aLeakAndAPathNameAnUnnamedBlockBySite() throws {
        var graph = GraphFixture()
        let site = "App.Loader.load() (Loader.swift:30)"
        let held = graph.block("", bytes: 256, kind: .unknown, stack: [site, "main (main.swift:1)"])
        graph.stack("main", held)
        graph.block("", bytes: 512, kind: .unknown, stack: [site])
        let target = HeapPathTarget.exactType(
            HeapTypeName(name: "", kind: .unknown, unnamedBlockBytes: 256, allocationSite: site),
            reason: .requestedType)
        let summary = try graph.analyse([target])
        let group = try #require(summary.groups.first)
        #expect(group.rootType.allocationSite == site && group.allocationStack == [site])
        #expect(summary.paths.first?.nodes.last?.type.allocationSite == site)
        #expect(summary.paths.first?.reachableInstances == 1)
    }
}
