import HarnessModel
import Verdicts

/// Attribution in the document: the top allocation sites of one profile, the difference between two
/// strategies as a sentence and a table, and the sites that grow per `repeat` iteration; and each as Markdown.
/// Deterministic: same values, same text.
public enum AttributionMarkdown {
    /// The top-sites table as Markdown (`topSitesBlocks`).
    public static func topSites(_ table: SiteTable, sampleMeanBytes: Int? = nil) -> String {
        MarkdownRenderer.render(topSitesBlocks(table, sampleMeanBytes: sampleMeanBytes))
    }

    /// The top-sites table: site, location, live bytes at the peak, share, blocks; then what the rest adds up to.
    /// A table without a site is a sentence instead, saying why (nothing sampled live at the peak) and what to try.
    static func topSitesBlocks(_ table: SiteTable, sampleMeanBytes: Int? = nil) -> [Block] {
        if table.rows.isEmpty && table.otherSites == 0 {
            let mean: Phrase =
                sampleMeanBytes.map { " (about one per \(Value.bytes(Double($0))) allocated)" } ?? ""
            return [
                .paragraph(
                    "No allocation stack sampled\(mean) was live at the peak above the baseline: the strategy held too "
                        + "little at its peak for the sampling to see. A smaller \(code: "--stack-sample") (or "
                        + "\(code: "attribution:") mean) sees smaller sites, at a higher cost.")
            ]
        }
        var rows = table.rows.enumerated().map { index, row -> [Phrase] in
            [
                .value(.count(index + 1)), .code(row.site.function), Phrase(stringLiteral: row.site.shortLocation),
                .value(.bytes(Double(row.liveBytes))), .value(.percent(row.shareOfPeak, decimals: 1)),
                .value(.count(row.liveCount)),
            ]
        }
        if table.otherSites > 0 {
            let share = table.totalLiveBytes > 0 ? Double(table.otherBytes) / Double(table.totalLiveBytes) : 0
            rows.append([
                "", "\(table.otherSites) other site\(table.otherSites == 1 ? "" : "s")", "",
                .value(.bytes(Double(table.otherBytes))), .value(.percent(share, decimals: 1)), "",
            ])
        }
        let columns: [Table.Column] = [
            .init("#", .number), .init("Allocation site"), .init("Location"), .init("Live at peak", .number),
            .init("Share", .number), .init("Blocks", .number),
        ]
        let note: Phrase =
            "Live at peak: bytes allocated at the site (by it or the library code it called) and still live at the "
            + "peak, above the baseline; estimated from byte-sampled stacks, \(Value.bytes(Double(table.totalLiveBytes))) in all"
            + (table.peakNetBytes > 0
                ? " against a measured peak of \(Value.bytes(Double(table.peakNetBytes))) above the baseline" : "")
            + ". A site is the innermost frame of your code on the stack."
        return [.table(Table(columns: columns, rows: rows)), .paragraph(note)]
    }

    /// The sentence that explains a difference: "`unbounded-dispatch` +138.00 MiB at the peak over
    /// `signal-next`, of which 131.00 MiB from `LiveQueryApp.deliver(_:)` (LiveQueryApp.swift:42)."
    public static func differenceSentence(_ difference: ProfileDifference) -> String {
        MarkdownRenderer.inline(differencePhrase(difference))
    }

    static func differencePhrase(_ difference: ProfileDifference) -> Phrase {
        let delta = difference.peakNetDeltaBytes
        let head: Phrase =
            "\(code: difference.label) \(Value.signedBytes(Double(delta))) at the peak over \(code: difference.baseLabel)"
        // The sites that moved the same way as the total explain it; the largest of them is named.
        let growing = delta >= 0
        let explaining = difference.sites.filter { growing ? $0.deltaBytes > 0 : $0.deltaBytes < 0 }
            .sorted { (abs($0.deltaBytes), $1.site) > (abs($1.deltaBytes), $0.site) }
        guard delta != 0, let top = explaining.first else { return head + "." }
        let from = growing ? "from" : "less from"
        var sentence: Phrase =
            head + ", of which \(Value.bytes(Double(abs(top.deltaBytes)))) \(from) \(code: top.site.function) "
            + "(\(top.site.shortLocation))"
        if explaining.count > 1 {
            let second = explaining[1]
            sentence.append(
                " and \(Value.bytes(Double(abs(second.deltaBytes)))) \(from) \(code: second.site.function) "
                    + "(\(second.site.shortLocation))")
        }
        return sentence + "."
    }

    /// The difference as Markdown (`differenceBlocks`).
    public static func difference(_ difference: ProfileDifference, limit: Int = 10) -> String {
        MarkdownRenderer.render(differenceBlocks(difference, limit: limit))
    }

    /// The sentence and a table of the sites that differ most (`limit` rows), both profiles side by side.
    static func differenceBlocks(_ difference: ProfileDifference, limit: Int = 10) -> [Block] {
        // Largest changes either way first; a negative limit shows none.
        let shown = difference.sites.sorted { (abs($0.deltaBytes), $1.site) > (abs($1.deltaBytes), $0.site) }
            .prefix(max(limit, 0))
        var rows = shown.map { row -> [Phrase] in
            [
                .code(row.site.function), Phrase(stringLiteral: row.site.shortLocation),
                .value(.bytes(Double(row.baseBytes))), .value(.bytes(Double(row.bytes))),
                .value(.signedBytes(Double(row.deltaBytes))),
            ]
        }
        let rest = difference.sites.count - shown.count
        if rest > 0 { rows.append(["\(rest) other site\(rest == 1 ? "" : "s")", "", "", "", ""]) }
        let columns: [Table.Column] = [
            .init("Allocation site"), .init("Location"), .init(.code(difference.baseLabel), .number),
            .init(.code(difference.label), .number), .init("Difference", .number),
        ]
        return [
            .paragraph(differencePhrase(difference)), .table(Table(columns: columns, rows: rows)),
            .paragraph(
                "The total is the difference of the measured peaks above the baseline; per site, of the sampled live "
                    + "bytes at each peak (sampled in all: \(Value.signedBytes(Double(difference.sampledDeltaBytes))))."
            ),
        ]
    }

    /// The growing sites as Markdown (`growthBlocks`).
    public static func growth(_ rows: [SiteGrowth], criteria: LeakCriteria = .standard, limit: Int = 10) -> String {
        MarkdownRenderer.render(growthBlocks(rows, criteria: criteria, limit: limit))
    }

    /// The sites whose live bytes grow per `repeat` iteration, per phase: those whose slope's 95%
    /// lower bound is above the criteria's minimum (`LeakCriteria.isGrowing`), as for the leak verdict.
    static func growthBlocks(_ rows: [SiteGrowth], criteria: LeakCriteria = .standard, limit: Int = 10) -> [Block] {
        let growing = rows.filter { criteria.isGrowing($0.fit) }
        guard !growing.isEmpty else { return [.paragraph("No allocation site grows per iteration.")] }
        let columns: [Table.Column] = [
            .init("Phase"), .init("Allocation site"), .init("Location"), .init("Growth per iteration", .number),
            .init("Iterations", .number),
        ]
        let shown = growing.prefix(max(limit, 0)).map { row -> [Phrase] in
            [
                Phrase(stringLiteral: row.phase), .code(row.site.function),
                Phrase(stringLiteral: row.site.shortLocation),
                "\(Value.bytes(row.fit.slopeBytesPerIteration)) ± \(Value.bytes(row.fit.boundBytesPerIteration))",
                .value(.count(row.fit.iterations)),
            ]
        }
        return [
            .table(Table(columns: columns, rows: shown)),
            .paragraph(
                "Growth: least-squares slope of the site's live bytes after each iteration, ± the half-width of its "
                    + "95% confidence interval."),
        ]
    }

    /// `text` as an inline code span in a table cell (`MarkdownRenderer.code`).
    static func code(_ text: String) -> String { MarkdownRenderer.code(text) }
}
