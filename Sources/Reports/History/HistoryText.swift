import FileIO
import Foundation
import HarnessModel
import History

/// The gate's and the diff's words and files.
public enum HistoryText {
    /// A change's step in percent: `+100.0%`.
    public static func percent(_ change: ChangePoint) -> String { Renderings.percent(change) }

    /// What `history gate` prints: each figure the newest run stepped up, by how much, against how many runs.
    public static func gate(_ verdict: HistoryGateVerdict, analysis: HistoryAnalysis) -> String {
        guard let newest = verdict.newest else { return "history gate: no run recorded: nothing to gate.\n" }
        let bands = Dictionary(analysis.series.map { ($0.series.key, $0.analysis.band) }) { first, _ in first }
        func line(_ finding: HistoryGateVerdict.Finding) -> String {
            let change = finding.change
            let band = bands[finding.key].map { Renderings.format($0, isBytes: finding.isBytes) } ?? "?"
            return "\(finding.key): \(Renderings.percent(change)) "
                + "(\(Renderings.format(change.medianBefore, isBytes: finding.isBytes)) → "
                + "\(Renderings.format(change.medianAfter, isBytes: finding.isBytes))), above its noise band ± \(band), "
                + "against \(change.runsBefore) earlier runs (p \(Renderings.pValue(change.pValue)))"
        }
        var lines: [String] = []
        for finding in verdict.findings { lines.append("FAIL  " + line(finding)) }
        for finding in verdict.improvements { lines.append("BETTER  " + line(finding)) }
        let run = "the newest run (\(newest.provenance.shortCommit), \(newest.id))"
        lines.append(
            verdict.failed
                ? "history gate: \(run) starts a step up in \(verdict.findings.count) of the \(verdict.checkedSeries) "
                    + "gated figures it measured."
                : "history gate: \(run) starts no step up in the \(verdict.checkedSeries) gated figures it measured.")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The kind of folder `history diff --out` replaces.
    public static let diffFolderKind = ReportFolder.FolderKind(
        marker: "diff.md", entries: ["diff.md", "flames", "folded"])

    /// The diff's folder: diff.md, a differential flame graph and a two-column folded file per attributed strategy.
    public static func diffFiles(_ diff: HistoryDiff) -> [(path: String, data: Data)] {
        var files = [(path: "diff.md", data: Data(diffMarkdown(diff).utf8))]
        for move in diff.sites {
            let name = Renderings.fileName(SeriesKey(scenario: move.scenario, strategy: move.strategy, figure: "sites"))
            let title =
                "\(move.scenario) / \(move.strategy): live memory at the peak, "
                + "\(diff.before.provenance.shortCommit) → \(diff.after.provenance.shortCommit)"
            if let svg = DifferentialFlameGraph.render(before: move.before, after: move.after, title: title) {
                files.append((path: "flames/\(name).svg", data: Data(svg.utf8)))
            }
            files.append((path: "folded/\(name).txt", data: Data(DifferentialFlameGraph.folded(move).utf8)))
        }
        return files
    }

    /// diff.md (also what `history diff` prints): the figures that moved, the sites and the types.
    public static func diffMarkdown(_ diff: HistoryDiff) -> String {
        let a = diff.before.provenance.shortCommit
        let b = diff.after.provenance.shortCommit
        var lines = [
            "# \(a) → \(b)", "", "Runs \(diff.before.id) and \(diff.after.id).", "", "## Figures that moved", "",
        ]
        if diff.figures.isEmpty {
            lines.append("None: the \(diff.steadyFigures) figures both runs have stayed within their noise.")
        } else {
            lines += [
                "| Scenario | Strategy | Figure | \(a) | \(b) | Change | Noise band |",
                "|---|---|---|---:|---:|---:|---:|",
            ]
            for move in diff.figures {
                lines.append(
                    "| \(move.key.scenario) | `\(move.key.strategy)` | \(move.key.figure) "
                        + "| \(Renderings.format(move.before, isBytes: move.isBytes)) "
                        + "| \(Renderings.format(move.after, isBytes: move.isBytes)) | \(Renderings.percent(move.relative)) "
                        + "| ± \(Renderings.format(move.band, isBytes: move.isBytes)) |")
            }
            lines += ["", "\(diff.steadyFigures) other figures stayed within their noise."]
        }
        lines += ["", "## Allocation sites", ""] + siteLines(diff) + ["", "## Types", ""] + typeLines(diff)
        lines += ["", "## Leak signatures", ""] + signatureLines(diff)
        return lines.joined(separator: "\n") + "\n"
    }

    private static func signatureLines(_ diff: HistoryDiff) -> [String] {
        guard !diff.signatures.isEmpty else {
            return ["No leak signature is new or gone, or no strategy was run with --heap-graph in both runs."]
        }
        var lines = [
            "| Scenario | Strategy | | Signature | Root | Groups | Bytes |", "|---|---|---|---|---|---:|---:|",
        ]
        for move in diff.signatures {
            for (word, tallies) in [("new", move.change.new), ("gone", move.change.gone)] {
                for tally in tallies.prefix(20) {
                    lines.append(
                        "| \(move.scenario) | `\(move.strategy)` | \(word) | `\(tally.signature)` "
                            + "| \(HeapGraphSection.typeLabel(tally.rootType)) | \(tally.groups) "
                            + "| \(Units.formatBytes(tally.bytes)) |")
                }
            }
        }
        if diff.signatures.contains(where: { !$0.change.isComplete }) {
            lines += [
                "", "A run's capture lists its largest leak groups only: among the rest, a signature may be in both.",
            ]
        }
        return lines
    }

    private static func siteLines(_ diff: HistoryDiff) -> [String] {
        guard !diff.sites.isEmpty else { return ["No strategy was run with --attribute in both runs."] }
        var lines: [String] = []
        for move in diff.sites {
            let name = Renderings.fileName(SeriesKey(scenario: move.scenario, strategy: move.strategy, figure: "sites"))
            let grown = DifferentialFlameGraph.leafMoves(move).prefix(5)
            lines.append("- \(move.scenario) / `\(move.strategy)`: ![differential flame graph](flames/\(name).svg)")
            for entry in grown {
                lines.append(
                    "  - \(Renderings.signed(Double(entry.delta), isBytes: true)) `\(entry.function)` "
                        + "(\(Units.formatBytes(entry.before)) → \(Units.formatBytes(entry.after)))")
            }
        }
        return lines
    }

    private static func typeLines(_ diff: HistoryDiff) -> [String] {
        guard !diff.types.isEmpty else {
            return ["No type moved, or no strategy was run with --heap-graph in both runs."]
        }
        var lines = ["| Scenario | Strategy | Type | Bytes before | Bytes after | Blocks before | Blocks after |"]
        lines.append("|---|---|---|---:|---:|---:|---:|")
        for move in diff.types.prefix(50) {
            lines.append(
                "| \(move.scenario) | `\(move.strategy)` | `\(move.type)` | \(Units.formatBytes(move.bytesBefore)) "
                    + "| \(Units.formatBytes(move.bytesAfter)) | \(move.countBefore) | \(move.countAfter) |")
        }
        return lines
    }
}
