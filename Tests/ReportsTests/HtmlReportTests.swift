import FileIO
import Foundation
import HarnessModel
import Testing

@testable import Reports

/// `report.html`: its golden file, that it is rendered again byte for byte, that it holds what `report.md` holds and
/// nothing from the network, and that no name in the data can end its script early. (What the page does in a
/// browser is tested in Chromium: Tests/BrowserTests, `make browser-test`.)
struct HtmlReportTests {
    /// The fixture run with one attributed case per strategy (stacks at the peak and per iteration; the heap graph of
    /// a subscription cycle for `unbounded-dispatch`), and a name that tries to end the page's script.
    static var record: RunRecord {
        var report = ReportFixture.report
        let profiles = [
            ("unbounded-dispatch", AttributionFixture.unbounded), ("signal-next", AttributionFixture.signalNext),
        ]
        report.scenarios[0].instrumentedCases = profiles.map { strategy, profile in
            var result = CaseResult(
                scenario: "live-query", workload: "live-query", strategy: strategy, repetition: 1,
                outcome: .completed(
                    measurements: CaseMeasurements(
                        baselineAllocatedBytes: 0, peak: AllocatorStatsValues(), peakRSSBytes: 0, residueBytes: 0,
                        durationNanoseconds: 1, profile: profile,
                        heapGraph: strategy == "unbounded-dispatch" ? HeapGraphFixture.summary : nil)))
            result.instrumentation = .stacks
            return result
        }
        report.scenarios[0].summary = "Unbounded dispatch vs signal-next </script><script>alert(1)</script> <!--"
        return RunRecord(report: report, checks: [])
    }

    static func page(_ record: RunRecord = record) throws -> String {
        let file = try #require(ReportBundle.renderings(record).first { $0.path == "report.html" })
        return String(decoding: file.data, as: UTF8.self)
    }

    /// The page's own markup and data; the script and style sheet (their own files, tested in Chromium) are
    /// replaced by their names, so the golden file changes with what Swift renders only.
    @Test func matchesGolden() throws {
        let page = try Self.page()
        #expect(page.contains(HtmlAssets.script) && page.contains(HtmlAssets.style))
        let markup = page.replacingOccurrences(of: HtmlAssets.script, with: "/* Html/assets/report.js */")
            .replacingOccurrences(of: HtmlAssets.style, with: "/* Html/assets/report.css */")
        try ReportWriterTests().checkGolden(markup, "report.html")
    }

    @Test func aFolderRenderedFromItsRunJSONHasTheSamePage() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("memharness-html-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try ReportFolder.render(Self.record, to: "\(directory)/first")
        let reread = try ReportFolder.read("\(directory)/first")
        try ReportFolder.render(reread, to: "\(directory)/second")
        let first = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/first/report.html"))
        let second = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/second/report.html"))
        #expect(!first.isEmpty)
        #expect(first == second)
    }

    @Test func theDataBlockIsTheWholeJSONWhateverTheNamesHold() throws {
        let page = try Self.page()
        let open = "<script type=\"application/json\" id=\"mh-data\">"
        let start = try #require(page.range(of: open))
        let end = try #require(page.range(of: "</script>", range: start.upperBound..<page.endIndex))
        let json = Data(page[start.upperBound..<end.lowerBound].utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let scenarios = try #require(object["scenarios"] as? [[String: Any]])
        let flame = try #require(scenarios.first?["flame"] as? [String: Any])
        let columns = try #require(flame["columns"] as? [[String: Any]])
        let peaks = columns.filter { $0["mark"] == nil }
        #expect(peaks.compactMap { $0["strategy"] as? String } == ["unbounded-dispatch", "signal-next"])
        let nodes = try #require(flame["nodes"] as? [[String: Any]])
        #expect(nodes.contains { ($0["name"] as? String)?.contains("<with \"markup\" & a | pipe>") == true })
        // The description in the page's text is escaped, not markup.
        #expect(page.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &lt;!--"))
        #expect(!page.contains("<script>alert(1)"))
    }

    @Test func everyTableAndHeadingOfTheMarkdownIsOnThePage() throws {
        let record = Self.record
        let page = try Self.page(record)
        let markdown = try #require(ReportBundle.renderings(record).first { $0.path == "report.md" })
        let lines = String(decoding: markdown.data, as: UTF8.self).split(separator: "\n")
        let tables = lines.filter { $0.hasPrefix("|---") || $0.hasPrefix("| ---") || $0.hasPrefix("|:--") }.count
        #expect(tables > 3)
        #expect(page.components(separatedBy: "<table>").count - 1 == tables)
        let headings = lines.filter { $0.hasPrefix("#") }.count
        let htmlHeadings = (1...6).map { page.components(separatedBy: "<h\($0) id=").count - 1 }.reduce(0, +)
        #expect(htmlHeadings == headings)
        for view in ["class=\"mh-timeline\"", "class=\"mh-flame\"", "class=\"mh-explore\""] {
            #expect(page.contains(view), "no \(view)")
        }
    }

    /// The comparison page (`compare --against DIR --html FILE`): this run's page with the earlier run's strategies
    /// beside each scenario's, and the sites that grew since at the top. A report folder's own page has neither.
    @Test func aComparisonPageCarriesTheEarlierRunsStrategies() throws {
        var earlier = Self.record.report
        earlier.generatedAt = "2026-01-02T03:04:05Z"
        earlier.scenarios[0].instrumentedCases.removeLast()
        let page = String(
            decoding: ReportBundle.comparisonPage(Self.record, since: .init(report: earlier, folder: "Reports/main")),
            as: UTF8.self)
        #expect(page.contains("<h2 id=\"since\">Since Reports/main (2026-01-02T03:04:05Z)</h2>"))
        #expect(page.contains("live-query / unbounded-dispatch: peak 0 B since Reports/main"))
        let data = try Self.data(page)
        #expect(data["earlierRun"] as? String == "Reports/main (2026-01-02T03:04:05Z)")
        let scenario = try #require((data["scenarios"] as? [[String: Any]])?.first)
        let columns = try #require((scenario["flame"] as? [String: Any])?["columns"] as? [[String: Any]])
        let before = columns.filter { $0["earlierRun"] as? String == "Reports/main (2026-01-02T03:04:05Z)" }
        #expect(before.compactMap { $0["strategy"] as? String } == ["unbounded-dispatch"])
        let own = try Self.data(try Self.page())
        #expect(own["earlierRun"] == nil)
        let ownColumns = (own["scenarios"] as? [[String: Any]])?.first.flatMap { $0["flame"] as? [String: Any] }
        #expect((ownColumns?["columns"] as? [[String: Any]])?.contains { $0["earlierRun"] != nil } == false)
        #expect(!(try Self.page()).contains("id=\"since\""))
    }

    static func data(_ page: String) throws -> [String: Any] {
        let open = "<script type=\"application/json\" id=\"mh-data\">"
        let start = try #require(page.range(of: open))
        let end = try #require(page.range(of: "</script>", range: start.upperBound..<page.endIndex))
        let json = Data(page[start.upperBound..<end.lowerBound].utf8)
        return try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
    }

    @Test func nothingComesFromTheNetwork() throws {
        let page = try Self.page()
        for pattern in ["src=\"http", "href=\"http", "<link", "fetch(", "import(", "XMLHttpRequest", "@import"] {
            #expect(!page.contains(pattern), "the page loads something: \(pattern)")
        }
        #expect(page.contains("<img alt=\"live-query: peak allocated by strategy\" src=\"data:image/svg+xml;base64,"))
    }

    @Test(arguments: [
        ("`a | b` and <b>", "<code>a | b</code> and &lt;b&gt;"),
        ("0.5 * limit <= 3 & \\*", "0.5 * limit &lt;= 3 &amp; \\*"),
        ("unclosed `tick and [bracket", "unclosed `tick and [bracket"),
        ("an empty `` pair", "an empty `` pair"),
    ])
    func typedWordsKeepTheirCodeSpansOnly(typed: String, html: String) {
        #expect(HtmlRenderer.inline(Phrase(typed: typed)) == html)
    }

    @Test func phrasesRenderTheirSpans() {
        let phrase: Phrase =
            "\(code: "a | b") and \(strong: "bold") " + Phrase([.link("link", .section(heading: "x"))])
            + " \(Value.signedBytes(-2048))"
        #expect(
            HtmlRenderer.inline(phrase)
                == "<code>a | b</code> and <strong>bold</strong> <a href=\"#x\">link</a> -2.00 KiB")
    }

    @Test func tablesAlignNumbersAndKeepPipes() {
        let table = Table(columns: [.init("A"), .init("B", .number)], rows: [[.code("x | y"), .value(.count(1))]])
        let html = HtmlRenderer.render(table)
        #expect(html.contains("<th class=\"id\">A</th><th class=\"r\">B</th>"))
        #expect(html.contains("<td class=\"id\"><code>x | y</code></td><td class=\"r\">1</td>"))
    }

    /// A table wraps to fit its page: a number column's figures are kept whole while its words wrap, a header breaks
    /// between a camelCase name's words, code where its parts meet; the row's name is the declared column, else the
    /// first.
    @Test func tablesWrapKeepingFiguresWhole() {
        let table = Table(
            columns: [.init("Strategy"), .init("Check", identifiesRow: true), .init("peakWalBytes (bytes)", .number)],
            rows: [
                [
                    .code("Profile.init(a:b:)"), "x",
                    "leaks (growth 80.69 KiB ± 29 B/iteration; 184 blocks (1.57 MiB)), 1.0 MiB – 2.0 MiB",
                ]
            ])
        let html = HtmlRenderer.render(table)
        #expect(
            html.contains(
                "<th>Strategy</th><th class=\"id\">Check</th><th class=\"r\">peak<wbr>Wal<wbr>Bytes (bytes)</th>"))
        #expect(html.contains("<td><code>Profile<wbr>.init<wbr>(a:<wbr>b:<wbr>)</code></td><td class=\"id\">x</td>"))
        #expect(
            html.contains(
                "<td class=\"r\">leaks (growth <span class=\"fig\">80.69 KiB ± 29 B/iteration;</span> "
                    + "<span class=\"fig\">184 blocks</span> <span class=\"fig\">(1.57 MiB)),</span> "
                    + "<span class=\"fig\">1.0 MiB – 2.0 MiB</span></td>"))
        #expect(HtmlText.figuresKeptWhole("– (no repeat step)") == "– (no repeat step)")
        #expect(HtmlText.codeBreaks("<code>Set&lt;Int&gt;</code> a.b") == "<code>Set&lt;<wbr>Int&gt;</code> a.b")
    }

    @Test func headingAnchorsAreGitHubs() {
        var slugs = Slugs()
        #expect(slugs.make("live-query") == "live-query")
        #expect(slugs.make("Peak allocated per phase") == "peak-allocated-per-phase")
        #expect(slugs.make("Peak allocated per phase") == "peak-allocated-per-phase-1")
        #expect(slugs.make((Phrase.code("signal-next") + " (x)").plainText) == "signal-next-x")
    }
}
