import FileIO
import Foundation
import HarnessModel
import Reports
import Testing

/// "Why memory is kept" end to end, through the built binaries: `memharness run subscriptions --heap-graph` on
/// the shipped scenario, over 8 screens instead of 20 (a capture after each, named and analysed in a debug build: 1.5 s
/// each). The seed's answers: the strategies it calls leak-free keep nothing; each strategy it says leaks loses its
/// 8 screens, and the heap graph shows them leaked, in a cycle, named by their types.
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
            "--quick", "--repeat", "1", "--set", "repeat.times=8", "--out", folder, "--quiet",
        ])
        try #require(outcome.status == 0 && !outcome.timedOut, "exit \(outcome.status): \(outcome.stderr)")
        let record = try ReportFolder.read(folder)
        let cases = try #require(record.report.scenarios.first).instrumentedCases
        func graph(_ strategy: String) throws -> HeapCaptureSummary {
            let result = try #require(cases.first { $0.strategy == strategy }, "no instrumented case of \(strategy)")
            let summary = try #require(result.measurements?.heapGraph, "\(strategy): no heap graph")
            #expect(summary.failures.isEmpty, "\(strategy): \(summary.failures)")
            // One capture after each of the 8 iterations of `repeat`, then one after teardown.
            #expect(summary.captures.count == 9)
            return try #require(summary.last)
        }
        for strategy in Self.leakFree {
            let last = try graph(strategy)
            // The probe sees the live heap (the runtime's and the workload's: 96 to 99 blocks; the harness's own are set
            // aside) ...
            #expect(last.liveBlocks > 50, "\(strategy): \(last.liveBlocks) live blocks")
            // ... and calls none of it leaked.
            #expect(last.leakedBlocks == 0, "\(strategy): \(last.leakedBlocks) leaked blocks")
        }
        for strategy in Self.leaking {
            let last = try graph(strategy)
            let screens = last.groups.flatMap(\.types).filter { $0.type.name == "SubscriptionsWorkload.ProfileScreen" }
            #expect(screens.reduce(0) { $0 + $1.count } == 8, "\(strategy): \(screens)")
            #expect(last.cycleCount >= 1, "\(strategy): no cycle")
            #expect(last.groups.allSatisfy { $0.kind == .rootCycle }, "\(strategy): \(last.groups.map(\.kind))")
        }
        // The report says it, draws the cycles and keeps a JSON file per capture.
        let report = try String(contentsOfFile: "\(folder)/report.md", encoding: .utf8)
        #expect(report.contains("### Why memory is kept"))
        #expect(report.contains("#### Heap graph: `strong-self-capture`"))
        let files = AttributionHarness.files(in: folder)
        #expect(files.contains("charts/subscriptions-strong-self-capture-cycle-1.svg"))
        #expect(files.contains("heap/subscriptions/strong-self-capture-9.json"))
        let svg = try String(
            contentsOfFile: "\(folder)/charts/subscriptions-strong-self-capture-cycle-1.svg", encoding: .utf8)
        #expect(svg.contains("<svg") && svg.contains("ProfileScreen") && svg.hasSuffix("</svg>\n"))
    }

    /// image-feed's `retain-all` keeps every decoded image (1 MiB each) until its 256 MiB limit stops it: it never
    /// tears down, and its capture at the peak is analysed when the limit is hit.
    @Test func aStrategyStoppedByItsMemoryLimitSaysWhatHeldItsPeak() throws {
        let harness = try AttributionHarness()
        defer { harness.cleanUp() }
        let shipped = try String(contentsOfFile: "\(Self.packageRoot)/Scenarios/image-feed.yaml", encoding: .utf8)
        // Its one strategy; the thresholds, about the others, go too.
        let others = ["unbind-offscreen", "nscache-unbounded", "unbind-nscache", "unbind-lru-cache"]
        let lines = shipped.split(separator: "\n", omittingEmptySubsequences: false).prefix { $0 != "thresholds:" }
            .filter { line in !others.contains { line.trimmingCharacters(in: .whitespaces) == "- \($0)" } }
        let file = "\(harness.directory)/image-feed.yaml"
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let folder = "\(harness.directory)/report"
        let outcome = try harness.memharness([
            "run", file, "--heap-graph", "--quick", "--repeat", "1", "--out", folder, "--quiet",
        ])
        try #require(!outcome.timedOut && outcome.status != 64, "exit \(outcome.status): \(outcome.stderr)")
        let record = try ReportFolder.read(folder)
        let result = try #require(record.report.scenarios.first?.instrumentedCases.first)
        guard case .killedByMemoryLimit(_, let measurements) = result.outcome else {
            Issue.record("retain-all was not stopped by its memory limit: \(result.outcome)")
            return
        }
        let peak = try #require(measurements.heapGraph?.peak, "no capture at the peak")
        // The capture is near the limit (a capture stands at most 10% below the peak) ...
        #expect(peak.capturedLiveBytes > 200 << 20, "captured at \(peak.capturedLiveBytes) bytes")
        // ... and its largest retainer is the posts' images, nearly all of it.
        let top = try #require(peak.capture.retainers?.rows.first)
        #expect(top.nodes.contains { $0.type.name == "ImageFeedWorkload.LoadedImage" }, "\(top.nodes.map(\.type))")
        #expect(Double(top.retainedBytes) > 0.9 * Double(peak.capture.reachableBytes))
        let report = try String(contentsOfFile: "\(folder)/report.md", encoding: .utf8)
        #expect(report.contains("#### `retain-all`") && report.contains("### What held the peak"))
    }

    @Test func retainedByWithoutAHeapGraphIsRefusedBeforeAnyWork() throws {
        let harness = try AttributionHarness()
        defer { harness.cleanUp() }
        let outcome = try harness.memharness(["run", "subscriptions", "--retained-by", "ProfileScreen"])
        #expect(outcome.status == 64)
        #expect(outcome.stderr.contains("--retained-by ProfileScreen needs --heap-graph"))
    }
}
