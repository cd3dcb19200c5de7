import Foundation
import HarnessModel
@testable import Reports
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Checks that a document is well-formed XML with a real parser, and collects its element names.
final class XMLCheck: NSObject, XMLParserDelegate {
    var elements: [String] = []
    var error: Error?

    static func parse(_ text: String) -> XMLCheck {
        let check = XMLCheck()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = check
        if !parser.parse() { check.error = parser.parserError ?? CocoaError(.coderInvalidValue) }
        return check
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        elements.append(elementName)
    }
}

struct ChartTests {
    var run: ScenarioRun { ReportFixture.report.scenarios[0] }

    @Test func chartsAreValidAccessibleSVG() throws {
        let charts = ReportBundle.charts(ReportFixture.report, scale: nil)
        #expect(charts.map(\.path) == ["charts/live-query-timeline.svg", "charts/live-query-peaks.svg", "charts/live-query-gauges.svg"])
        for chart in charts {
            let check = XMLCheck.parse(chart.text)
            #expect(check.error == nil, "\(chart.path): \(String(describing: check.error))")
            #expect(check.elements.first == "svg")
            #expect(check.elements.contains("title") && check.elements.contains("desc"), "\(chart.path) needs <title> and <desc>")
        }
    }

    @Test(arguments: ["timeline", "peaks", "gauges"])
    func chartsMatchGolden(kind: String) throws {
        let charts = Dictionary(uniqueKeysWithValues: ReportBundle.charts(ReportFixture.report, scale: nil).map { ($0.path, $0.text) })
        let text = try #require(charts["charts/live-query-\(kind).svg"])
        try ReportWriterTests().checkGolden(text, "live-query-\(kind).svg")
    }

    @Test func namesWithMarkupAreEscaped() throws {
        var tricky = run
        tricky.name = "a<b> & \"c\""
        let svg = try #require(TimelineChart.render(tricky))
        #expect(XMLCheck.parse(svg).error == nil)
        #expect(svg.contains("a&lt;b&gt; &amp; &quot;c&quot;"))
    }

    @Test func logScaleIsChosenWhenPeaksDifferByOrdersOfMagnitude() throws {
        let linear = try #require(TimelineChart.render(run, scale: .linear))
        let automatic = try #require(TimelineChart.render(run))
        #expect(linear.contains("linear scale"))
        // The fixture's peaks differ by ~14x: auto stays linear.
        #expect(automatic.contains("linear scale"))
        var wide = run
        wide.cases = wide.cases.map { result in
            guard result.strategy == "signal-next" else { return result }
            var copy = result
            copy.peak.allocatedBytes = result.baselineAllocatedBytes + 100_000
            if var samples = copy.samples {
                samples.allocatedBytes = samples.allocatedBytes.map { min($0, result.baselineAllocatedBytes + 100_000) }
                copy.samples = samples
            }
            return copy
        }
        #expect(try #require(TimelineChart.render(wide)).contains("log scale"))
    }

    @Test func downsamplingKeepsExtremesAndBoundsThePoints() {
        let times = (0..<100_000).map(Double.init)
        var values = times.map { $0.truncatingRemainder(dividingBy: 7) }
        values[54_321] = 1e9
        values[12_345] = -5
        let points = minMaxDownsample(times: times, values: values, buckets: 500)
        #expect(points.count <= 1000)
        #expect(points.contains { $0.1 == 1e9 && $0.0 == 54_321 })
        #expect(points.contains { $0.1 == -5 })
        #expect(zip(points, points.dropFirst()).allSatisfy { $0.0 <= $1.0 })
    }

    @Test func axisTicksAreReadable() {
        let axis = ValueAxis(maximum: 150 * 1_048_576, minimumPositive: 1, scale: .linear, isBytes: true)
        #expect(axis.ticks.map(axis.label) == ["0", "25 MiB", "50 MiB", "75 MiB", "100 MiB", "125 MiB", "150 MiB"])
        #expect(timeTicks(maximumSeconds: 3.2).map(secondsLabel) == ["0", "500 ms", "1 s", "1.5 s", "2 s", "2.5 s", "3 s"])
        let log = ValueAxis(maximum: 100 * 1_048_576, minimumPositive: 100_000, scale: .log, isBytes: true)
        #expect(log.ticks.first == 65_536)
        #expect((log.ticks.last ?? 0) >= 100 * 1_048_576)
    }
}

struct ReportReaderTests {
    @Test func csvFilesRebuildTheSameReport() throws {
        let report = ReportFixture.report
        var metadata = report
        for index in metadata.scenarios[0].cases.indices { metadata.scenarios[0].cases[index].samples = nil }
        let rebuilt = try ReportReader.read(summary: SummaryCSV.render(report), samples: SamplesCSV.render(report, maxRowsPerCase: 0), metadata: metadata)
        #expect(MarkdownReport.render(rebuilt) == MarkdownReport.render(report))
        #expect(SummaryCSV.render(rebuilt) == SummaryCSV.render(report))
        #expect(rebuilt.scenarios[0].cases[0].samples?.allocatedBytes == report.scenarios[0].cases[0].samples?.allocatedBytes)
    }

    @Test func aForeignFileIsRejectedWithItsPlace() {
        #expect(throws: ReportReader.ReadError.self) { try ReportReader.read(summary: "a,b\r\n1,2\r\n", samples: nil, metadata: nil) }
        var summary = SummaryCSV.render(ReportFixture.report)
        summary = summary.replacingOccurrences(of: ",ok,", with: ",fine,")
        do {
            _ = try ReportReader.read(summary: summary, samples: nil, metadata: nil)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.hasPrefix("summary.csv:2: unknown status 'fine'"))
        }
    }
}
