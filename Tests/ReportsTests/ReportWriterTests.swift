import FileIO
import Foundation
import HarnessModel
import Reports
import Testing

/// Golden-file tests: the writers' output for a fixed input is compared byte for byte.
/// Run with `UPDATE_GOLDEN=1` to rewrite the golden files after an intended change (then review the diff).
struct ReportWriterTests {
    static let goldenDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Golden")

    func checkGolden(_ text: String, _ name: String) throws {
        let url = Self.goldenDirectory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let golden = try String(contentsOf: url, encoding: .utf8)
        #expect(text == golden, "\(name) differs from its golden file; rerun with UPDATE_GOLDEN=1 and review the diff")
    }

    @Test func markdownMatchesGolden() throws {
        try checkGolden(MarkdownReport.render(ReportFixture.report), "report.md")
    }

    @Test func summaryCSVMatchesGolden() throws {
        try checkGolden(SummaryCSV.render(ReportFixture.report), "summary.csv")
    }

    @Test func samplesCSVMatchesGolden() throws {
        try checkGolden(SamplesCSV.render(ReportFixture.report), "samples.csv")
    }

    @Test func exactPeaksAppearBesideTheSampledOnesOnlyWhenMeasured() throws {
        let report = ReportFixture.exactReport()
        try checkGolden(MarkdownReport.render(report), "report-exact.md")
        try checkGolden(SummaryCSV.render(report), "summary-exact.csv")
        let sampledHeader = try #require(CSVTable.parse(SummaryCSV.render(ReportFixture.report)).first)
        #expect(!sampledHeader.contains("exact_peak_net_bytes"))
        #expect(!MarkdownReport.render(ReportFixture.report).contains("Exact peak"))
    }

    /// `run.json` is encoded a scenario at a time (so a large run never holds the encoder's whole tree):
    /// the bytes must be those of encoding the record at once, for one scenario and for several.
    @Test func runJSONInPiecesIsTheWholeEncoding() throws {
        var several = ReportFixture.report
        several.scenarios += ReportFixture.exactReport().scenarios + [RankingFigureTests.rankedByMetric]
        several.scenarios[1].name = "second"
        for report in [ReportFixture.report, several] {
            let record = ReportBundle.record(report, checks: [], rendering: RenderingOptions())
            var pieces: [Data] = []
            try RecordCodec.encode(record) { pieces.append($0) }
            #expect(pieces.count == report.scenarios.count + 2)
            #expect(pieces.reduce(Data(), +) == (try RecordCodec.encodeWhole(record)))
            #expect(try RecordCodec.decode(RecordCodec.encode(record), file: "run.json") == record)
        }
    }

    @Test func theFloorAppearsBesideThePeaksOnlyWhenMeasured() throws {
        let report = ReportFixture.floorReport()
        try checkGolden(MarkdownReport.render(report), "report-floor.md")
        try checkGolden(SummaryCSV.render(report), "summary-floor.csv")
        let rows = CSVTable.parse(SummaryCSV.render(report))
        let header = try #require(rows.first)
        // The fixed columns keep their places; the floor's follow them, the exact one follows the exact columns.
        #expect(Array(header.prefix(SummaryCSV.fixedColumns.count)) == SummaryCSV.fixedColumns)
        #expect(
            Array(header.dropFirst(SummaryCSV.fixedColumns.count).prefix(2)) == SummaryCSV.floorColumns)
        let row = try #require(rows.dropFirst().first { $0[header.firstIndex(of: "repetition") ?? 0] == "2" })
        #expect(row[header.firstIndex(of: "peak_uncertainty_bytes") ?? 0] == "2112")
        #expect(row[header.firstIndex(of: "exact_peak_uncertainty_bytes") ?? 0] == "64")
        #expect(row[header.firstIndex(of: "residue_uncertainty_bytes") ?? 0] == "512")
        let markdown = MarkdownReport.render(report)
        #expect(markdown.contains("± after a peak is its measurement floor"))
        // Records without a floor render as before (the other golden files), with no ± and no floor column.
        #expect(!MarkdownReport.render(ReportFixture.exactReport()).contains("measurement floor"))
        let exactHeader = try #require(CSVTable.parse(SummaryCSV.render(ReportFixture.exactReport())).first)
        #expect(!exactHeader.contains("peak_uncertainty_bytes"))
    }

    @Test func theFloorReadsBackFromTheRecord() throws {
        let report = ReportFixture.floorReport()
        let record = ReportBundle.record(report, checks: [], rendering: RenderingOptions())
        let read = try RecordCodec.decode(try RecordCodec.encode(record), file: "run.json").report
        let written = report.scenarios.flatMap(\.cases).compactMap(\.completed)
        let back = read.scenarios.flatMap(\.cases).compactMap(\.completed)
        #expect(!written.isEmpty)
        #expect(back.map(\.floor) == written.map(\.floor))
        #expect(back.map(\.phases) == written.map(\.phases))
        #expect(back.map { $0.leaks?.residueUncertaintyBytes } == written.map { $0.leaks?.residueUncertaintyBytes })
    }

    @Test func exactPeaksReadBackFromTheRecord() throws {
        let report = ReportFixture.exactReport()
        let record = ReportBundle.record(report, checks: [], rendering: RenderingOptions())
        let read = try RecordCodec.decode(try RecordCodec.encode(record), file: "run.json").report
        let written = report.scenarios.flatMap(\.cases).compactMap(\.completed)
        let back = read.scenarios.flatMap(\.cases).compactMap(\.completed)
        #expect(back.count == written.count)
        #expect(!written.isEmpty)
        for (original, copy) in zip(written, back) {
            #expect(copy.exact == original.exact)
            #expect(copy.spikeExcessBytes == original.spikeExcessBytes)
            #expect(
                copy.phases.map { copy.exactPeakNetBytes(of: $0) }
                    == original.phases.map { original.exactPeakNetBytes(of: $0) })
        }
        #expect(back.first?.spikeExcessBytes == 3_000_000)
    }

    @Test func summaryCSVParsesBackWithOneRowPerCase() throws {
        let rows = CSVTable.parse(SummaryCSV.render(ReportFixture.report))
        let header = try #require(rows.first)
        #expect(Array(header.prefix(SummaryCSV.fixedColumns.count)) == SummaryCSV.fixedColumns)
        #expect(header.contains("phase.burst.peak_allocated_net_bytes"))
        #expect(header.contains("metric.stalenessP99_ms"))
        #expect(rows.count == 1 + 5)
        #expect(rows.allSatisfy { $0.count == header.count })
        let crashed = try #require(rows.first { $0[2] == "deliver-on" })
        #expect(crashed[header.firstIndex(of: "status") ?? 0] == "crashed")
        #expect(
            crashed[header.firstIndex(of: "failure") ?? 0]
                == "killed by signal 6 (SIGABRT): Fatal error, \"quoted\" | piped")
        let first = rows[1]
        #expect(first[header.firstIndex(of: "peak_allocated_net_bytes") ?? 0] == "142000000")
    }

    @Test func samplesCSVParsesBackInLongForm() throws {
        let rows = CSVTable.parse(SamplesCSV.render(ReportFixture.report))
        let header = try #require(rows.first)
        #expect(header == SamplesCSV.fixedColumns + ["gauge.pending"])
        #expect(rows.count == 1 + 4 * 6)
        #expect(rows[1].prefix(5) == ["live-query", "unbounded-dispatch", "1", "0.000", "setup"])
    }

    @Test func csvQuotesOnlyWhatNeedsIt() {
        #expect(CSVTable.field("plain") == "plain")
        #expect(CSVTable.field("a,b") == "\"a,b\"")
        #expect(CSVTable.field("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(CSVTable.parse("a,\"b,c\",\"d\"\"e\"\r\n1,2,3\r\n") == [["a", "b,c", "d\"e"], ["1", "2", "3"]])
    }

    @Test func thinningKeepsEveryPeak() {
        var series = SampleSeries(phaseNames: ["p"], gaugeNames: ["g"])
        for row in 0..<1000 {
            series.timeNanoseconds.append(Int64(row))
            series.allocatedBytes.append(row == 777 ? 9999 : row % 10)
            for keyPath in [
                \SampleSeries.activeBytes, \.residentBytes, \.mappedBytes, \.retainedBytes, \.metadataBytes, \.rssBytes,
            ] {
                series[keyPath: keyPath].append(row)
            }
            series.phaseIndex.append(0)
            series.gauges[0].append(row == 3 ? 50 : 0)
        }
        let thin = SeriesThinning.thin(series, maxRows: 100)
        #expect(thin.count == 100)
        #expect(thin.mergedSamplesPerRow == 10)
        #expect(thin.allocatedBytes.max() == 9999)
        #expect(thin.gauges[0].max() == 50)
        #expect(thin.rssBytes.last == 999)
    }
}

extension ReportWriterTests {
    @Test func autoRepetitionsShowTheIntervalBesideTheMedian() throws {
        let report = ReportFixture.autoReport
        let markdown = MarkdownReport.render(report)
        try checkGolden(markdown, "report-auto.md")
        try checkGolden(SummaryCSV.render(report), "summary-auto.csv")
        #expect(markdown.contains("repetitions: auto, 6–9 per strategy"))
        #expect(markdown.contains("| `signal-next` | 9 | peak allocated |"))
        #expect(markdown.contains("at the maximum (9)"))
        #expect(markdown.contains("a repetition did not complete"))
        // Fixed-count reports keep their shape: no interval column, no Repetitions section.
        #expect(!MarkdownReport.render(ReportFixture.report).contains("95% interval"))
        #expect(!SummaryCSV.render(ReportFixture.report).contains("ci95"))
    }

    @Test func recordsWithoutAutoRepetitionsReadAsBefore() throws {
        let fixed = ReportBundle.record(ReportFixture.report, checks: [], rendering: RenderingOptions())
        let text = String(decoding: try RecordCodec.encode(fixed), as: UTF8.self)
        #expect(!text.contains("adaptiveRepetitions"), "a fixed run's record has the shape it had before")
        let auto = ReportBundle.record(ReportFixture.autoReport, checks: [], rendering: RenderingOptions())
        let data = try RecordCodec.encode(auto)
        let back = try RecordCodec.decode(data, file: "run.json")
        #expect(back == auto)
        #expect(ReportBundle.renderings(back).map(\.data) == ReportBundle.renderings(auto).map(\.data))
    }
}
