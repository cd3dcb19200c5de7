import Foundation
import HarnessModel
import Testing

@testable import Reports

/// "What held the peak": each strategy's retainers at its capture at the peak, in report.md and as a table in
/// report.html.
struct PeakRetainersSectionTests {
    /// `LiveQuery` .pending -> closure contexts x3000 -> `Document` x3000, 238 MiB of 250 MiB reachable.
    static var peak: HeapPeakCapture {
        var capture = HeapCaptureSummary(label: "at the peak", timeNanoseconds: 2_000_000_000)
        capture.liveBlocks = 9_100
        capture.reachableBytes = 250 << 20
        let closure = HeapTypeName(name: "closure #1 in LiveQuery.deliver(_:)", kind: .closureContext)
        capture.retainers = HeapRetainers(
            rows: [
                HeapRetainer(
                    root: HeapPathRoot(kind: .global(symbol: "App.query", module: "App"), description: "App.query"),
                    nodes: [
                        HeapRetainerNode(
                            type: HeapGraphFixture.type("App.LiveQuery"), count: 1, shallowBytes: 64,
                            retainedBytes: 240 << 20),
                        HeapRetainerNode(
                            type: HeapTypeName(name: "[() -> ()]", kind: .arrayStorage), fieldName: "pending",
                            count: 1, shallowBytes: 24_608, retainedBytes: 238 << 20),
                        HeapRetainerNode(type: closure, count: 3_000, shallowBytes: 96_000, retainedBytes: 238 << 20),
                        HeapRetainerNode(
                            type: HeapGraphFixture.type("App.Document"), fieldName: "document", count: 3_000,
                            shallowBytes: 3_000 * 80, retainedBytes: 237 << 20),
                    ],
                    retainedBytes: 238 << 20, firstRetainingNode: 1,
                    allocationStack: ["LiveQuery.deliver(_:) (LiveQuery.swift:41)", "main"])
            ], omittedRows: 4, reachableBytes: 250 << 20)
        return HeapPeakCapture(
            capture: capture, peakLiveBytes: 260 << 20, capturedLiveBytes: 251 << 20, captureCount: 12,
            captureNanoseconds: 420_000_000, analysisNanoseconds: 310_000_000)
    }

    static var record: RunRecord {
        var record = HtmlReportTests.record
        for index in record.report.scenarios[0].instrumentedCases.indices {
            guard case .completed(let measurements) = record.report.scenarios[0].instrumentedCases[index].outcome,
                var graph = measurements.heapGraph
            else { continue }
            graph.peak = peak
            record.report.scenarios[0].instrumentedCases[index].outcome = .completed(
                measurements: measurements.adding(heapGraph: graph))
        }
        return record
    }

    @Test func theSectionListsTheChainTheRowRetainsItsShareRootAndSite() throws {
        let markdown = MarkdownReport.render(Self.record.report)
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let heading = try #require(lines.firstIndex(of: "### What held the peak"))
        #expect(lines[heading...].contains("#### `unbounded-dispatch`"))
        #expect(
            lines.contains(
                "Captured at 251.00 MiB live (the peak: 260.00 MiB): 9100 live blocks, 250.00 MiB reachable. Cost: 12 "
                    + "captures at successive highs, 420.00 ms with the case's threads stopped; the last one read, "
                    + "named and analysed in 310.00 ms after the case."))
        #expect(
            lines.contains(
                "| `App.LiveQuery` → **.pending `[() -> ()]`** → `closure #1 in LiveQuery.deliver(_:)` ×3000 → "
                    + ".document `App.Document` ×3000 | 3000 | 238.00 MiB | 95.2% | `App.query` | "
                    + "`LiveQuery.deliver(_:) (LiveQuery.swift:41)` |"))
        #expect(lines.contains("| 4 smaller chains | – | – | – | – | – |"))
    }

    @Test func withoutACaptureAtThePeakThereIsNoSection() {
        #expect(!MarkdownReport.render(HtmlReportTests.record.report).contains("What held the peak"))
    }

    @Test func thePageShowsTheSectionAsATable() throws {
        let page = try HtmlReportTests.page(Self.record)
        let section = try #require(page.range(of: "What held the peak"))
        let table = try #require(page.range(of: "<table", range: section.upperBound..<page.endIndex))
        #expect(page[table.lowerBound...].contains("238.00 MiB"))
    }
}
