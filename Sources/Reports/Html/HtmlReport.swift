import Foundation
import HarnessModel

/// `report.html`: one self-contained page to explore a run, rendered from the record like every other file.
///
/// The page is the run's document as HTML (`HtmlRenderer`: every table and paragraph `report.md` has, from the same
/// document) with its pictures in place: the timeline becomes a zoomable chart of every strategy on one time axis, each flame graph an
/// interactive one (click to zoom, search, hover), the other charts (peaks, gauges, cycles) are the report's own
/// SVGs inlined as `data:` images. After each scenario's section come the views Markdown cannot have: a differential
/// flame graph of two strategies chosen by the reader, the live set at each iteration mark ("over time"), and each
/// leaked cycle and retaining path drawn as a node-link diagram.
///
/// Everything is in the file: the data as JSON in a `<script type="application/json">` (`HtmlPageData`), the
/// script and the style sheet (`HtmlAssets`). Nothing is fetched, so it opens from `file://` and from a CI artifact.
///
/// The drawing is hand-written JavaScript over Canvas (the timeline) and SVG (flame graphs, diagrams), not a
/// library: Debian's `libjs-d3` is d3 v3 (2016), 150 KB minified, and what the page needs from it (scales, a zoom
/// behaviour, a partition layout) is about as much code as using it; hand-written, the timeline draws only what is
/// visible, decimated to one min/max pair per pixel column, so a 10,000-sample timeline allocates nothing per
/// sample, and the page carries no third-party code to keep current.
public enum HtmlReport {
    /// The earlier run a comparison page sets beside a run (`memharness compare DIR --against EARLIER --html FILE`):
    /// its attributed strategies join the difference view of each scenario of the same name, and the page opens
    /// with the allocation sites that grew since.
    public struct EarlierRun: Sendable {
        public var report: RunReport
        /// The run in words: its folder and when it was made.
        public var label: String

        public init(report: RunReport, folder: String) {
            self.report = report
            label = "\(folder) (\(report.generatedAt))"
        }
    }

    /// The page for `record`, whose document is `document`; with `earlier`, the comparison page of the two runs.
    /// A pure function: the same input gives the same bytes.
    public static func render(_ record: RunRecord, document: ReportDocument, earlier: EarlierRun? = nil) -> String {
        let report = record.report
        let data = HtmlPageData(report, earlier: earlier)
        var renderer = HtmlRenderer(
            hasTimeline: { data.scenarios.indices.contains($0) && data.scenarios[$0].timeline != nil },
            explores: { index in
                guard data.scenarios.indices.contains(index) else { return false }
                let scenario = data.scenarios[index]
                let columns = scenario.flame?.columns ?? []
                let peaks = columns.filter { $0.mark == nil }
                return (peaks.contains { $0.earlierRun == nil } && peaks.count >= 2)
                    || columns.contains { $0.mark != nil }
                    || scenario.heapGraphs.contains { !$0.captures.isEmpty }
            })
        let body = renderer.render(document)
        guard let earlier else {
            return page(title: "memharness report · \(report.generatedAt)", body: body, data: data)
        }
        return page(
            title: "memharness comparison · \(report.generatedAt) since \(earlier.label)",
            body: comparison(report, earlier) + body, data: data)
    }

    /// The head of a comparison page: which two runs, where to look, and the allocation sites that grew since
    /// the earlier run (`SiteGrowthListing`, as `compare --against` prints it).
    static func comparison(_ report: RunReport, _ earlier: EarlierRun) -> String {
        let listing = SiteGrowthListing.render(report, since: earlier.report, earlierFolder: earlier.label)
        return "<section class=\"mh-since\">\n<h2 id=\"since\">Since \(HtmlText.escape(earlier.label))</h2>\n"
            + "<p>This page is the report of the run of \(HtmlText.escape(report.generatedAt)) with the earlier run "
            + "beside it: in each scenario\u{2019}s <em>Explore</em> section the difference view offers the "
            + "strategies of both runs (those recorded with <code>--attribute</code>), the same strategy of the two "
            + "runs first.</p>\n<p>Allocation sites whose live bytes at the peak grew since:</p>\n"
            + "<pre class=\"mh-growth\">\(HtmlText.escape(listing))</pre>\n</section>\n"
    }

    /// A chart of the report as a picture: its SVG as a `data:` URI (an `<img>` keeps each SVG's ids and colours its
    /// own); a link when the file is not one of `images`.
    static func figure(alt: String, path: String, svg: Data?) -> String {
        guard let svg else {
            return "<p><a href=\"\(HtmlText.escape(path))\">\(HtmlText.escape(alt))</a></p>"
        }
        return "<figure><img alt=\"\(HtmlText.escape(alt))\" src=\"data:image/svg+xml;base64,"
            + svg.base64EncodedString() + "\"></figure>"
    }

    static func page(title: String, body: String, data: HtmlPageData) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>\(HtmlText.escape(title))</title>
        <style>
        \(HtmlAssets.style)
        </style>
        </head>
        <body>
        <main>
        \(body)
        </main>
        <div id="mh-tip" role="tooltip" hidden></div>
        <script type="application/json" id="mh-data">\(data.scriptText())</script>
        <script>
        \(HtmlAssets.script)
        </script>
        </body>
        </html>

        """
    }
}
