import FileIO
import Foundation
import HarnessModel
import Testing

@testable import Reports

/// A made-up case: a subscription cycle kept by a root leak, a self-loop, a growing screen type and a path.
enum HeapGraphFixture {
    static func type(_ name: String) -> HeapTypeName { HeapTypeName(name: name, kind: .swiftObject) }

    static let closure = HeapTypeName(name: "", kind: .closureContext, unnamedBlockBytes: 32)
    static let block10 = HeapTypeName(name: "", kind: .unknown, unnamedBlockBytes: 10)

    static var cycle: HeapCycle {
        HeapCycle(
            memberBlocks: 3, memberBytes: 232,
            edges: [
                HeapCycleEdge(
                    from: type("App.ProfileScreen"), fieldName: "subscription", byteOffset: 16, kind: .strong,
                    to: type("OpenCombine.Sink<App.Profile>")),
                HeapCycleEdge(
                    from: type("OpenCombine.Sink<App.Profile>"), fieldName: "receiveValue", byteOffset: 24,
                    kind: .strong, to: closure),
                HeapCycleEdge(
                    from: closure, fieldName: "self", byteOffset: 16, kind: .strong, to: type("App.ProfileScreen")),
            ])
    }

    static var capture: HeapCaptureSummary {
        var capture = HeapCaptureSummary(label: "after teardown", timeNanoseconds: 1_500_000_000)
        capture.liveBlocks = 1_204
        capture.liveBytes = 96_512
        capture.rootCount = 310
        capture.reachableBlocks = 1_192
        capture.reachableBytes = 96_122
        capture.leakedBlocks = 12
        capture.leakedBytes = 390
        capture.cycleCount = 3
        capture.rootCycleCount = 2
        capture.rootLeakCount = 5
        capture.groups = [
            HeapLeakGroup(
                kind: .rootCycle, blocks: 4, bytes: 264, rootBlocks: 3, rootType: type("App.ProfileScreen"),
                types: [
                    HeapTypeTally(type: type("App.ProfileScreen"), count: 1, bytes: 160),
                    HeapTypeTally(type: type("OpenCombine.Sink<App.Profile>"), count: 1, bytes: 40),
                    HeapTypeTally(type: closure, count: 1, bytes: 32),
                    HeapTypeTally(
                        type: HeapTypeName(name: "", kind: .sideTable, unnamedBlockBytes: 32), count: 1, bytes: 32),
                ],
                allocationStack: ["App.ProfileScreen.init() (ProfileScreen.swift:14)", "main (main.swift:3)"],
                cycle: cycle),
            HeapLeakGroup(
                kind: .rootCycle, blocks: 1, bytes: 32, rootBlocks: 1, rootType: type("App.Node"),
                types: [HeapTypeTally(type: type("App.Node"), count: 1, bytes: 32)],
                cycle: HeapCycle(
                    memberBlocks: 1, memberBytes: 32,
                    edges: [
                        HeapCycleEdge(
                            from: type("App.Node"), fieldName: "next", byteOffset: 16, kind: .strong,
                            to: type("App.Node"))
                    ])),
            HeapLeakGroup(
                kind: .rootLeak, blocks: 3, bytes: 30, rootBlocks: 1, rootType: block10,
                types: [HeapTypeTally(type: block10, count: 3, bytes: 30)],
                omittedTypes: 2, allocationStack: ["main (probe.c:12)"],
                nestedCycles: [
                    HeapCycle(
                        memberBlocks: 2, memberBytes: 20,
                        edges: [
                            HeapCycleEdge(from: block10, fieldName: nil, byteOffset: 8, kind: .strong, to: block10),
                            HeapCycleEdge(from: block10, fieldName: nil, byteOffset: 0, kind: .strong, to: block10),
                        ])
                ]),
        ]
        capture.omittedGroups = 4
        capture.omittedGroupBlocks = 4
        capture.omittedGroupBytes = 64
        capture.paths = [
            HeapRetainingPath(
                query: "ProfileStore", reason: .requestedType, reachableInstances: 1, leakedInstances: 0,
                root: HeapPathRoot(
                    kind: .global(symbol: "App.ProfileStore.shared", module: "App"),
                    description: "App.ProfileStore.shared"),
                nodes: [
                    HeapPathNode(
                        type: type("App.ProfileStore"), fieldName: "observers", byteOffset: 16, edgeKind: .strong),
                    HeapPathNode(
                        type: HeapTypeName(name: "", kind: .arrayStorage, unnamedBlockBytes: 64), byteOffset: 32,
                        edgeKind: .strong),
                    HeapPathNode(type: closure, fieldName: "screen", byteOffset: 16, edgeKind: .unowned),
                    HeapPathNode(type: type("App.DetailScreen")),
                ]),
            HeapRetainingPath(
                query: "App.Link", reason: .growingType, reachableInstances: 40, leakedInstances: 0,
                root: HeapPathRoot(
                    kind: .threadStack(threadID: 2, threadName: "worker", frameFunction: "App.Worker.run()"),
                    description: "thread 2"),
                nodes: [
                    HeapPathNode(type: type("App.List"), fieldName: "head", byteOffset: 16, edgeKind: .strong),
                    HeapPathNode(type: type("App.Link"), fieldName: "next", byteOffset: 16, edgeKind: .strong),
                    HeapPathNode(type: type("App.Link"), fieldName: "next", byteOffset: 16, edgeKind: .strong),
                    HeapPathNode(type: type("App.Link")),
                ], omittedNodes: 36),
            HeapRetainingPath(
                query: "App.Gone", reason: .trackedSurvivor, reachableInstances: 0, leakedInstances: 2, root: nil,
                nodes: []),
        ]
        capture.types = [HeapTypeTally(type: type("App.ProfileScreen"), count: 3, bytes: 480)]
        capture.omittedPaths = 1
        return capture
    }

    static var summary: HeapGraphSummary {
        var iteration = HeapCaptureSummary(label: "iteration 3", timeNanoseconds: 1_000_000_000)
        iteration.leakedBlocks = 0
        return HeapGraphSummary(
            captures: [iteration, capture],
            growth: [
                HeapTypeGrowth(
                    type: type("App.ProfileScreen"), counts: [1, 2, 3], bytes: [160, 320, 480], isSuspect: true),
                HeapTypeGrowth(type: closure, counts: [2, 1, 2], bytes: [64, 32, 64], isSuspect: false),
            ],
            omittedGrowthTypes: 1, generationLabels: ["iteration 1", "iteration 2", "iteration 3"],
            failures: [HeapCaptureFailure(label: "iteration 4", reason: .timedOut, detail: "no reply within 5 s")])
    }
}

struct HeapGraphSectionTests {
    @Test func sectionMatchesGolden() throws {
        let text = try #require(
            HeapGraphSection.markdown(
                for: HeapGraphFixture.summary, strategy: "strong-self",
                cycleDiagram: { "heap/strong-self-cycle-\($0).svg" }))
        try ReportWriterTests().checkGolden(text, "heap-graph-section.md")
    }

    /// A group a suppression matches is marked in the leaks table, counted in the capture's line, and its reason
    /// given below the table; the other groups are as they were.
    @Test func aSuppressedGroupIsMarkedWithItsReason() throws {
        let suppression = LeakSuppression(.type("App.Node"), reason: "a known leak of the node library\n")
        let section = try #require(
            HeapGraphSection.section(
                for: HeapGraphFixture.summary, strategy: "strong-self", suppressions: [suppression]))
        let text = MarkdownRenderer.render([.section(section)])
        let plain = try #require(HeapGraphSection.markdown(for: HeapGraphFixture.summary, strategy: "strong-self"))
        #expect(!plain.contains("known leak"))
        #expect(text.contains("; 1 group of 1 block (32 B) is a known leak, suppressed."), "\(text)")
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| ") && $0.contains("App.") }
        #expect(rows.filter { $0.contains("known leak, suppressed: ") }.count == 1, "\(rows)")
        #expect(rows.contains { $0.contains("known leak, suppressed: ") && $0.contains("App.Node") })
        #expect(text.contains("**Known leaks** (the suppressions' reasons): group 2: a known leak of the node library"))
    }

    @Test func anEmptySummaryHasNoSection() {
        #expect(HeapGraphSection.markdown(for: HeapGraphSummary(captures: []), strategy: "x") == nil)
    }

    @Test func cycleDiagramsAreValidSVGAndMatchGolden() throws {
        let ring = CycleDiagram.svg(for: HeapGraphFixture.cycle, title: "subscriptions · strong-self · cycle 1")
        let loop = try #require(HeapGraphFixture.capture.groups[1].cycle)
        let selfLoop = CycleDiagram.svg(for: loop, title: "cycle 2")
        for svg in [ring, selfLoop] {
            let check = XMLCheck.parse(svg)
            #expect(check.error == nil)
            #expect(
                check.elements.first == "svg" && check.elements.contains("title") && check.elements.contains("desc"))
        }
        #expect(ring.contains("receiveValue") && ring.contains("closure context"))
        try ReportWriterTests().checkGolden(ring, "heap-cycle.svg")
        try ReportWriterTests().checkGolden(selfLoop, "heap-cycle-self-loop.svg")
    }

    @Test func theCaptureJSONRoundTripsAndIsStable() throws {
        let capture = HeapGraphFixture.capture
        let text = try HeapGraphJSON.render(capture, scenario: "subscriptions", strategy: "strong-self")
        #expect(try HeapGraphJSON.render(capture, scenario: "subscriptions", strategy: "strong-self") == text)
        try JSONText.check(Array(text.utf8))
        struct Document: Decodable {
            var format: String
            var version: Int
            var capture: HeapCaptureSummary
        }
        let decoded = try JSONDecoder().decode(Document.self, from: Data(text.utf8))
        #expect(decoded.format == HeapGraphJSON.format && decoded.version == 1 && decoded.capture == capture)
    }

    @Test func unnamedBlocksAreNamedByWhatTheyAre() {
        #expect(
            HeapGraphSection.typeLabel(HeapTypeName(name: "", kind: .unknown, unnamedBlockBytes: 48))
                == "block of 48 bytes")
        #expect(HeapGraphSection.typeLabel(HeapGraphFixture.closure) == "closure context")
        #expect(HeapGraphSection.typeLabel(HeapGraphFixture.type("App.A")) == "App.A")
    }

    /// A block that is no object is named by its allocation site: in words, and in Markdown with the site as code.
    @Test func anUnnamedBlockWithAStackIsNamedByItsSite() {
        let buffer = HeapTypeName(
            name: "", kind: .unknown, unnamedBlockBytes: 4096, allocationSite: "App.Cache.grow() (Cache.swift:12)")
        #expect(
            HeapGraphSection.typeLabel(buffer) == "block of 4096 bytes allocated at App.Cache.grow() (Cache.swift:12)")
        #expect(
            MarkdownRenderer.inline(HeapGraphSection.typeCell(buffer), inTable: true)
                == "block of 4096 bytes allocated at `App.Cache.grow() (Cache.swift:12)`")
    }

    /// A type that grew between generations and has no name is listed among the paths by what it is and where it was
    /// allocated (it was `?`), and one that no longer has a live block in the last capture says so.
    @Test func aGrowingBlockWithoutANameIsListedBySite() {
        let buffer = HeapTypeName(
            name: "", kind: .unknown, unnamedBlockBytes: 4096, allocationSite: "App.Cache.grow() (Cache.swift:12)")
        var capture = HeapCaptureSummary(label: "at exit", timeNanoseconds: 0)
        var grown = HeapRetainingPath(
            query: "", reason: .growingType, reachableInstances: 0, leakedInstances: 0, root: nil, nodes: [])
        grown.type = buffer
        capture.paths = [grown]
        let text = MarkdownRenderer.render(HeapGraphSection.pathBlocks(capture))
        #expect(
            text.contains(
                "- block of 4096 bytes allocated at `App.Cache.grow() (Cache.swift:12)` (grows every iteration, "
                    + "0 reachable, 0 leaked): none is live in this capture (it grew between earlier ones)"),
            "\(text)")
        #expect(!text.contains("`?`"))
    }
}

struct LeakSignatureListingTests {
    /// `record`'s instrumented cases with leak groups of these signatures in their last capture.
    static func report(signatures: [String]) -> RunReport {
        var report = HtmlReportTests.record.report
        for index in report.scenarios[0].instrumentedCases.indices {
            guard case .completed(let measurements) = report.scenarios[0].instrumentedCases[index].outcome else {
                continue
            }
            var capture = HeapGraphFixture.capture
            capture.groups = signatures.map {
                HeapLeakGroup(
                    kind: .rootCycle, signature: $0, count: 20, blocks: 60, bytes: 4096, rootBlocks: 3,
                    rootType: HeapGraphFixture.type("App.Session"), types: [])
            }
            capture.omittedGroups = 0
            report.scenarios[0].instrumentedCases[index].outcome = .completed(
                measurements: measurements.adding(heapGraph: HeapGraphSummary(captures: [capture])))
        }
        return report
    }

    @Test func compareAgainstNamesTheNewAndGoneSignaturesOfEachStrategy() {
        let text = SiteGrowthListing.render(
            Self.report(signatures: ["bbbb", "cccc"]), since: Self.report(signatures: ["aaaa", "bbbb"]),
            earlierFolder: "old")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("live-query / unbounded-dispatch: leak signatures since old: 1 new, 1 gone, 1 in both"))
        #expect(lines.contains("  new  cccc  App.Session ×20, 4.00 KiB"))
        #expect(lines.contains("  gone  aaaa  App.Session ×20, 4.00 KiB"))
        let same = SiteGrowthListing.render(
            Self.report(signatures: ["aaaa"]), since: Self.report(signatures: ["aaaa"]), earlierFolder: "old")
        #expect(same.contains("live-query / signal-next: leak signatures since old: 0 new, 0 gone, 1 in both"))
    }
}
