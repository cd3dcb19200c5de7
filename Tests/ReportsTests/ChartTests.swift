import FileIO
import Foundation
import HarnessModel
import TestSupport
import Testing

@testable import Reports

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

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        elements.append(elementName)
    }
}

struct ChartTests {
    var run: ScenarioRun { ReportFixture.report.scenarios[0] }

    @Test(arguments: [
        ("json-cache @ responseSize=16KiB", "json-cache-response-size-16kib"),
        ("live-query", "live-query"),
        ("signal_next  deliver-on", "signal-next-deliver-on"),
        ("A/B @ burst.duration=1.5s", "a-b-burst-duration-1-5s"),
        ("@@", "unnamed"),
    ])
    func fileNameStemsAreWordsJoinedBySingleDashes(name: String, stem: String) {
        #expect(ReportBundle.chartStem(name) == stem)
    }

    @Test func chartsAreValidAccessibleSVG() throws {
        let charts = ReportBundle.charts(ReportFixture.report, scale: nil)
        #expect(
            charts.map(\.path) == [
                "charts/live-query-timeline.svg", "charts/live-query-peaks.svg", "charts/live-query-gauges.svg",
            ])
        for chart in charts {
            let check = XMLCheck.parse(chart.text)
            #expect(check.error == nil, "\(chart.path): \(String(describing: check.error))")
            #expect(check.elements.first == "svg")
            #expect(
                check.elements.contains("title") && check.elements.contains("desc"),
                "\(chart.path) needs <title> and <desc>")
        }
    }

    @Test(arguments: ["timeline", "peaks", "gauges"])
    func chartsMatchGolden(kind: String) throws {
        let charts = Dictionary(
            uniqueKeysWithValues: ReportBundle.charts(ReportFixture.report, scale: nil).map { ($0.path, $0.text) })
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
            return result.changingMeasurements { m in
                let cap = m.baselineAllocatedBytes + 100_000
                m.peak.allocatedBytes = cap
                if var samples = m.samples {
                    samples.allocatedBytes = samples.allocatedBytes.map { min($0, cap) }
                    m.samples = samples
                }
            }
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
        #expect(
            timeTicks(maximumSeconds: 3.2).map(secondsLabel) == ["0", "500 ms", "1 s", "1.5 s", "2 s", "2.5 s", "3 s"])
        let log = ValueAxis(maximum: 100 * 1_048_576, minimumPositive: 100_000, scale: .log, isBytes: true)
        #expect(log.ticks.first == 65_536)
        #expect((log.ticks.last ?? 0) >= 100 * 1_048_576)
    }
}

struct RecordCodecTests {
    @Test func theRecordRebuildsEveryRenderingByteForByte() throws {
        let record = ReportBundle.record(
            ReportFixture.report, checks: [], rendering: RenderingOptions(samplesMaxRows: 4))
        let data = try RecordCodec.encode(record)
        let decoded = try RecordCodec.decode(data, file: "run.json")
        #expect(decoded == record)
        let original = ReportBundle.renderings(record)
        let again = ReportBundle.renderings(decoded)
        #expect(original.map(\.path) == again.map(\.path))
        for (first, second) in zip(original, again) { #expect(first.data == second.data, "\(first.path) differs") }
        // The record holds the series thinned to the rendering's rows, the same the CSV shows.
        #expect(decoded.report.scenarios[0].cases[0].measurements?.samples?.count == 3)
    }

    @Test func aForeignOrDamagedRecordIsRejectedWithItsPlace() throws {
        #expect(throws: ReportError.self) { try RecordCodec.decode(Data("a,b\r\n1,2\r\n".utf8), file: "run.json") }
        let record = ReportBundle.record(ReportFixture.report, checks: [], rendering: RenderingOptions())
        let text = String(decoding: try RecordCodec.encode(record), as: UTF8.self)
        for (damage, expected) in [
            (
                text.replacingOccurrences(of: RunRecord.currentSchema, with: "memharness-run/1"),
                "written by another version"
            ),
            (
                text.replacingOccurrences(of: "\"phaseIndex\" : \"0 1", with: "\"phaseIndex\" : \"x 1"),
                "is not a whole number"
            ),
        ] {
            #expect(damage != text, "the damage applies to the fixture")
            do {
                _ = try RecordCodec.decode(Data(damage.utf8), file: "out/run.json")
                Issue.record("expected an error for \(expected)")
            } catch {
                #expect(error.description.hasPrefix("out/run.json"), "\(error)")
                #expect(error.description.contains(expected), "\(error)")
            }
        }
    }
}
