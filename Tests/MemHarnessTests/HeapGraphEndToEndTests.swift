import FileIO
import Foundation
import HarnessModel
import Reports
import Testing

/// "Why memory is kept" end to end, through the built binaries: `memharness run subscriptions --heap-graph` on
/// the shipped scenario. The seed's answers: the strategies it calls leak-free keep nothing; each strategy it
/// says leaks loses its 20 screens, and the heap graph shows them leaked, in a cycle, named by their types.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct HeapGraphEndToEndTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let leakFree = ["implicit-finite", "disposed", "self-derived-weak", "weak-self", "finite-publisher"]
    static let leaking = ["implicit-infinite", "self-derived-strong", "strong-self-capture", "assign-to-self"]

    @Test func subscriptionsLeakExactlyWhereTheSeedSaysAndTheGraphShowsTheCycles() throws {
        let harness = try AttributionHarness()
        defer { harness.cleanUp() }
        let folder = "\(harness.directory)/report"
        let outcome = try harness.memharness([
            "run", "\(Self.packageRoot)/Scenarios/subscriptions.yaml", "--heap-graph", "--retained-by", "ProfileStore",
            "--quick", "--repeat", "1", "--out", folder, "--quiet",
        ])
        try #require(outcome.status == 0 && !outcome.timedOut, "exit \(outcome.status): \(outcome.stderr)")
        let record = try ReportFolder.read(folder)
        let cases = try #require(record.report.scenarios.first).instrumentedCases
        func graph(_ strategy: String) throws -> HeapCaptureSummary {
            let result = try #require(cases.first { $0.strategy == strategy }, "no instrumented case of \(strategy)")
            let summary = try #require(result.measurements?.heapGraph, "\(strategy): no heap graph")
            #expect(summary.failures.isEmpty, "\(strategy): \(summary.failures)")
            // One capture after each of the 20 iterations of `repeat`, then one after teardown.
            #expect(summary.captures.count == 21)
            return try #require(summary.last)
        }
        for strategy in Self.leakFree {
            let last = try graph(strategy)
            // The probe sees the live heap (the runtime's, the harness's) ...
            #expect(last.liveBlocks > 100, "\(strategy): \(last.liveBlocks) live blocks")
            // ... and calls none of it leaked.
            #expect(last.leakedBlocks == 0, "\(strategy): \(last.leakedBlocks) leaked blocks")
        }
        for strategy in Self.leaking {
            let last = try graph(strategy)
            let screens = last.groups.flatMap(\.types).filter { $0.type.name == "SubscriptionsWorkload.ProfileScreen" }
            #expect(screens.reduce(0) { $0 + $1.count } == 20, "\(strategy): \(screens)")
            #expect(last.cycleCount >= 1, "\(strategy): no cycle")
            #expect(last.groups.allSatisfy { $0.kind == .rootCycle }, "\(strategy): \(last.groups.map(\.kind))")
        }
        // The report says it, draws the cycles and keeps a JSON file per capture.
        let report = try String(contentsOfFile: "\(folder)/report.md", encoding: .utf8)
        #expect(report.contains("### Why memory is kept"))
        #expect(report.contains("#### Heap graph: `strong-self-capture`"))
        let files = AttributionHarness.files(in: folder)
        #expect(files.contains("charts/subscriptions-strong-self-capture-cycle-1.svg"))
        #expect(files.contains("heap/subscriptions/strong-self-capture-21.json"))
        let svg = try String(
            contentsOfFile: "\(folder)/charts/subscriptions-strong-self-capture-cycle-1.svg", encoding: .utf8)
        #expect(svg.contains("<svg") && svg.contains("ProfileScreen") && svg.hasSuffix("</svg>\n"))
    }

    @Test func retainedByWithoutAHeapGraphIsRefusedBeforeAnyWork() throws {
        let harness = try AttributionHarness()
        defer { harness.cleanUp() }
        let outcome = try harness.memharness(["run", "subscriptions", "--retained-by", "ProfileScreen"])
        #expect(outcome.status == 64)
        #expect(outcome.stderr.contains("--retained-by ProfileScreen needs --heap-graph"))
    }
}
