import HarnessModel
import Verdicts

/// Markdown for attribution: the top allocation sites of one profile, the difference between two
/// strategies as a sentence and a table, and the sites that grow per `repeat` iteration.
/// Deterministic: same values, same text.
public enum AttributionMarkdown {
    /// The top-sites table: site, location, live bytes at the peak, share, blocks; then what the rest adds up to.
    /// A table without a site is a sentence instead, saying why (nothing sampled live at the peak) and what to try.
    public static func topSites(_ table: SiteTable, sampleMeanBytes: Int? = nil) -> String {
        if table.rows.isEmpty && table.otherSites == 0 {
            let mean = sampleMeanBytes.map { " (about one per \(Units.formatBytes($0)) allocated)" } ?? ""
            return "No allocation stack sampled\(mean) was live at the peak above the baseline: the strategy held too "
                + "little at its peak for the sampling to see. A smaller `--stack-sample` (or `attribution:` mean) "
                + "sees smaller sites, at a higher cost.\n"
        }
        var out: [String] = []
        out.append("| # | Allocation site | Location | Live at peak | Share | Blocks |")
        out.append("|---:|---|---|---:|---:|---:|")
        for (index, row) in table.rows.enumerated() {
            out.append(
                "| \(index + 1) | \(code(row.site.function)) | \(MarkdownReport.cell(row.site.shortLocation)) | "
                    + "\(Units.formatBytes(row.liveBytes)) | \(percent(row.shareOfPeak)) | \(row.liveCount) |")
        }
        if table.otherSites > 0 {
            let share = table.totalLiveBytes > 0 ? Double(table.otherBytes) / Double(table.totalLiveBytes) : 0
            out.append(
                "|  | \(table.otherSites) other site\(table.otherSites == 1 ? "" : "s") |  | \(Units.formatBytes(table.otherBytes)) | \(percent(share)) |  |"
            )
        }
        out.append("")
        out.append(
            "Live at peak: bytes allocated at the site (by it or the library code it called) and still live at the peak, "
                + "above the baseline; estimated from byte-sampled stacks, \(Units.formatBytes(table.totalLiveBytes)) in all"
                + (table.peakNetBytes > 0
                    ? " against a measured peak of \(Units.formatBytes(table.peakNetBytes)) above the baseline" : "")
                + ". A site is the innermost frame of your code on the stack.")
        return out.joined(separator: "\n") + "\n"
    }

    /// The sentence that explains a difference: "`unbounded-dispatch` +138.00 MiB at the peak over
    /// `signal-next`, of which 131.00 MiB from `LiveQueryApp.deliver(_:)` (LiveQueryApp.swift:42)."
    public static func differenceSentence(_ difference: ProfileDifference) -> String {
        let delta = difference.peakNetDeltaBytes
        let head = "\(code(difference.label)) \(signed(delta)) at the peak over \(code(difference.baseLabel))"
        // The sites that moved the same way as the total explain it; the largest of them is named.
        let growing = delta >= 0
        let explaining = difference.sites.filter { growing ? $0.deltaBytes > 0 : $0.deltaBytes < 0 }
            .sorted { (abs($0.deltaBytes), $1.site) > (abs($1.deltaBytes), $0.site) }
        guard delta != 0, let top = explaining.first else { return head + "." }
        var sentence =
            head + ", of which \(Units.formatBytes(abs(top.deltaBytes))) "
            + (growing ? "from" : "less from") + " \(code(top.site.function)) (\(top.site.shortLocation))"
        if explaining.count > 1 {
            let second = explaining[1]
            sentence +=
                " and \(Units.formatBytes(abs(second.deltaBytes))) \(growing ? "from" : "less from") \(code(second.site.function)) (\(second.site.shortLocation))"
        }
        return sentence + "."
    }

    /// The sentence and a table of the sites that differ most (`limit` rows), both profiles side by side.
    public static func difference(_ difference: ProfileDifference, limit: Int = 10) -> String {
        var out = [differenceSentence(difference), ""]
        out.append(
            "| Allocation site | Location | \(code(difference.baseLabel)) | \(code(difference.label)) | Difference |")
        out.append("|---|---|---:|---:|---:|")
        // Largest changes either way first; a negative limit shows none.
        let rows = difference.sites.sorted { (abs($0.deltaBytes), $1.site) > (abs($1.deltaBytes), $0.site) }.prefix(
            max(limit, 0))
        for row in rows {
            out.append(
                "| \(code(row.site.function)) | \(MarkdownReport.cell(row.site.shortLocation)) | "
                    + "\(Units.formatBytes(row.baseBytes)) | \(Units.formatBytes(row.bytes)) | \(signed(row.deltaBytes)) |"
            )
        }
        let rest = difference.sites.count - rows.count
        if rest > 0 { out.append("|  \(rest) other site\(rest == 1 ? "" : "s") |  |  |  |  |") }
        out.append("")
        out.append(
            "The total is the difference of the measured peaks above the baseline; per site, of the sampled live bytes at each peak "
                + "(sampled in all: \(signed(difference.sampledDeltaBytes))).")
        return out.joined(separator: "\n") + "\n"
    }

    /// The sites whose live bytes grow per `repeat` iteration, per phase: those whose slope's 95%
    /// lower bound is above the criteria's minimum (`LeakCriteria.isGrowing`), as for the leak verdict.
    public static func growth(_ rows: [SiteGrowth], criteria: LeakCriteria = .standard, limit: Int = 10) -> String {
        let growing = rows.filter { criteria.isGrowing($0.fit) }
        guard !growing.isEmpty else { return "No allocation site grows per iteration.\n" }
        var out = [
            "| Phase | Allocation site | Location | Growth per iteration | Iterations |", "|---|---|---|---:|---:|",
        ]
        for row in growing.prefix(max(limit, 0)) {
            out.append(
                "| \(MarkdownReport.cell(row.phase)) | \(code(row.site.function)) | \(MarkdownReport.cell(row.site.shortLocation)) | "
                    + "\(Units.formatBytes(row.fit.slopeBytesPerIteration)) ± \(Units.formatBytes(row.fit.boundBytesPerIteration)) | \(row.fit.iterations) |"
            )
        }
        out.append("")
        out.append(
            "Growth: least-squares slope of the site's live bytes after each iteration, ± the half-width of its 95% confidence interval."
        )
        return out.joined(separator: "\n") + "\n"
    }

    /// `text` as an inline code span in a table cell (the module's one helper: `MarkdownReport.code`).
    static func code(_ text: String) -> String { MarkdownReport.code(text) }

    static func percent(_ fraction: Double) -> String {
        Units.fixed(fraction * 100, decimals: 1) + "%"
    }

    static func signed(_ bytes: Int) -> String {
        (bytes > 0 ? "+" : "") + Units.formatBytes(bytes)
    }
}
