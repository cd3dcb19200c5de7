import HarnessModel

/// `Reports/index.md`: one row per report folder, newest first, with its scenarios and headline.
public enum RunIndex {
    /// A report folder and its run.
    public struct Entry: Sendable {
        public var folder: String
        public var report: RunReport
        public init(folder: String, report: RunReport) {
            self.folder = folder
            self.report = report
        }
    }

    public static func render(_ entries: [Entry]) -> String {
        var out = [
            "# Runs", "",
            "Each folder is one `memharness run`; newest first. Regenerated whenever a run writes a folder here.", "",
        ]
        out.append("| Run | Date | Scenarios | Cases ok | Headline |")
        out.append("|---|---|---|---:|---|")
        for entry in entries.sorted(by: { ($0.report.generatedAt, $0.folder) > ($1.report.generatedAt, $1.folder) }) {
            let cases = entry.report.scenarios.flatMap(\.cases)
            let ok = cases.filter { $0.status == .ok }.count
            let headline = headline(entry.report)
            out.append(
                "| [\(MarkdownReport.cell(entry.folder))](\(entry.folder)/report.md) | \(entry.report.generatedAt) | "
                    + entry.report.scenarios.map { MarkdownReport.code($0.name) }.joined(separator: ", ")
                    + " | \(ok)/\(cases.count) | \(MarkdownReport.cell(headline)) |")
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// The largest worst-to-best ratio of the run, as one sentence.
    static func headline(_ report: RunReport) -> String {
        let candidates = report.scenarios.compactMap { run -> (String, Double)? in
            let summary = ScenarioSummary(run)
            guard let worst = summary.ranked.last, let ratio = summary.ratioToBest(worst), summary.ranked.count > 1
            else { return nil }
            return ("\(run.name): \(summary.reading)", ratio)
        }
        return candidates.max { $0.1 < $1.1 }?.0 ?? "–"
    }
}
