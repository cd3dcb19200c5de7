import FileIO
import Foundation
import HarnessModel
import History

/// Wording shared by the history's renderings.
enum Renderings {
    static func format(_ value: Double, isBytes: Bool) -> String {
        isBytes ? Units.formatBytes(value) : Units.fixed(value, decimals: value == value.rounded() ? 0 : 3)
    }

    static func signed(_ value: Double, isBytes: Bool) -> String {
        isBytes ? Value.signedBytes(value).text : (value > 0 ? "+" : "") + format(value, isBytes: false)
    }

    static func percent(_ change: ChangePoint) -> String { percent(change.relativeStep) }

    static func percent(_ fraction: Double) -> String { Value.signedPercent(fraction, decimals: 1).text }

    /// A p-value as people read it: `< 0.0001` below that.
    static func pValue(_ value: Double) -> String { value < 0.0001 ? "< 0.0001" : Units.fixed(value, decimals: 4) }

    /// A file name for a series: its parts with anything but letters, digits, `.`, `_` and `-` replaced.
    static func fileName(_ key: SeriesKey) -> String {
        [key.scenario, key.strategy, key.figure].map { part in
            String(part.map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "-" })
        }.joined(separator: "--")
    }
}

/// `history show`: the history report folder, history.md and one chart per series under charts/.
public enum HistoryReport {
    /// The kind of folder `history show` replaces: one with history.md and its charts only.
    public static let folderKind = ReportFolder.FolderKind(marker: "history.md", entries: ["history.md", "charts"])

    /// Every file of the report, history.md first.
    public static func files(_ analysis: HistoryAnalysis) -> [(path: String, data: Data)] {
        var files = [(path: "history.md", data: Data(markdown(analysis).utf8))]
        for entry in analysis.series {
            let chart = HistoryChart.render(entry, runs: analysis.runs)
            files.append((path: "charts/\(Renderings.fileName(entry.series.key)).svg", data: Data(chart.utf8)))
        }
        return files
    }

    /// history.md: the runs, every change point, then each scenario's series with their charts.
    public static func markdown(_ analysis: HistoryAnalysis) -> String {
        var lines = ["# Memory across commits", ""]
        guard let first = analysis.runs.first, let last = analysis.runs.last else {
            return (lines + ["No run recorded yet: `memharness history record REPORT-DIR` adds one.", ""])
                .joined(separator: "\n")
        }
        let commits = Set(analysis.runs.map(\.provenance.commit)).count
        lines.append(
            "\(analysis.runs.count) runs of \(commits) commits, from \(first.provenance.shortCommit) "
                + "(\(first.provenance.time)) to \(last.provenance.shortCommit) (\(last.provenance.time)); "
                + "\(analysis.series.count) series. Change points by PELT (normal mean-change cost, modified BIC "
                + "penalty), each kept when its step exceeds the series' noise band (± 2.5σ; σ a robust estimate, "
                + "never below the figure's quantum or 0.1% of its level, 1% for the resident pages of files, which follow "
                + "the page cache) with p < 0.01 and persists: at least two "
                + "runs at the new level, at most 10% of the runs either side past the midpoint, and an excursion "
                + "that returns to where it was is noise.")
        lines += ["", "## Change points", ""]
        lines += changeTable(analysis)
        lines += newestRunLines(analysis)
        var scenario = ""
        for entry in analysis.series {
            let key = entry.series.key
            if key.scenario != scenario {
                scenario = key.scenario
                lines += ["", "## \(key.scenario)", ""]
            }
            lines += seriesLines(entry, runs: analysis.runs)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func changeTable(_ analysis: HistoryAnalysis) -> [String] {
        var rows: [String] = []
        for entry in analysis.series {
            for change in entry.analysis.changePoints {
                let run = analysis.run(of: change, in: entry)
                let isBytes = entry.series.isBytes
                rows.append(
                    "| \(entry.series.key.scenario) | `\(entry.series.key.strategy)` | \(entry.series.key.figure)"
                        + (entry.series.gated ? " (gated)" : "") + " | `\(run.provenance.shortCommit)` "
                        + "| \(Renderings.format(change.medianBefore, isBytes: isBytes)) "
                        + "| \(Renderings.format(change.medianAfter, isBytes: isBytes)) | \(Renderings.percent(change)) "
                        + "| \(change.runsBefore) / \(change.runsAfter) | \(Renderings.pValue(change.pValue)) |")
            }
        }
        guard !rows.isEmpty else { return ["No figure stepped above its noise."] }
        return [
            "| Scenario | Strategy | Figure | Commit | Median before | Median after | Step | Runs before / after | p |",
            "|---|---|---|---|---:|---:|---:|---:|---:|",
        ] + rows
    }

    /// The figures the newest run alone moved beyond their noise, when there are any: steps if the runs after it
    /// stay there.
    private static func newestRunLines(_ analysis: HistoryAnalysis) -> [String] {
        let moved = analysis.series.compactMap { entry in entry.analysis.newestRunStep.map { (entry, $0) } }
        guard let newest = analysis.runs.last, !moved.isEmpty else { return [] }
        var lines = [
            "", "## The newest run", "",
            "The newest run (`\(newest.provenance.shortCommit)`) alone lies beyond the noise of \(moved.count) "
                + "figure(s), further out than any earlier run strayed: a step if the runs after it stay there, noise "
                + "if they return. `history gate` fails on a gated figure it moved up.", "",
            "| Scenario | Strategy | Figure | Median before | Newest run | Step | Runs before | p |",
            "|---|---|---|---:|---:|---:|---:|---:|",
        ]
        for (entry, change) in moved {
            let key = entry.series.key
            let isBytes = entry.series.isBytes
            lines.append(
                "| \(key.scenario) | `\(key.strategy)` | \(key.figure)" + (entry.series.gated ? " (gated)" : "")
                    + " | \(Renderings.format(change.medianBefore, isBytes: isBytes)) "
                    + "| \(Renderings.format(change.medianAfter, isBytes: isBytes)) | \(Renderings.percent(change)) "
                    + "| \(change.runsBefore) | \(Renderings.pValue(change.pValue)) |")
        }
        return lines
    }

    private static func seriesLines(_ entry: AnalysedSeries, runs: [HistoryRun]) -> [String] {
        let series = entry.series
        let isBytes = series.isBytes
        let latest = series.values.last ?? 0
        var text =
            "- `\(series.key.strategy)` \(series.key.figure)\(series.gated ? " (gated)" : ""): "
            + "\(series.values.count) runs, latest \(Renderings.format(latest, isBytes: isBytes)), noise "
            + "± \(Renderings.format(entry.analysis.band, isBytes: isBytes))"
        if entry.analysis.changePoints.isEmpty {
            text += ", no change point"
        } else {
            text +=
                "; "
                + entry.analysis.changePoints.map { change in
                    let run = runs[series.runIndices[change.index]]
                    return "stepped \(Renderings.percent(change)) at `\(run.provenance.shortCommit)`"
                }.joined(separator: ", ")
        }
        if let newest = entry.analysis.newestRunStep {
            text += "; the newest run alone moved \(Renderings.percent(newest)) (a step if the next runs stay there)"
        }
        return [text, "", "  ![\(series.key)](charts/\(Renderings.fileName(series.key)).svg)", ""]
    }
}
