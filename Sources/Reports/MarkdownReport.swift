import HarnessModel

/// `report.md`: the run's document (`ReportBuilder`) rendered as Markdown.
public enum MarkdownReport {
    /// Renders the whole report. Deterministic: same input, same text.
    /// - Parameter charts: relative paths of the chart files written beside the report; those present are embedded.
    /// - Parameter checks: thresholds, baseline comparisons and leak expectations evaluated on this run.
    public static func render(_ report: RunReport, charts: Set<String> = [], checks: [CheckResult] = []) -> String {
        MarkdownRenderer.render(ReportBuilder.document(report, checks: checks, files: charts))
    }

    /// `1.12 KiB ± 96 B`: a figure with its measurement floor, or the figure alone when the floor is unknown or 0.
    static func withFloor(_ bytes: Double, _ uncertaintyBytes: Int?) -> String {
        Value.bytesWithFloor(bytes, floorBytes: uncertaintyBytes).text
    }

    static func unitLabel(_ unit: Metric.Unit?) -> String {
        switch unit {
        case .bytes?: return " (bytes)"
        case .milliseconds?: return " (ms)"
        case .ratio?: return " (ratio)"
        case .perSecond?: return " (/s)"
        case .count?, nil: return ""
        }
    }

    static func format(_ metric: Metric) -> String {
        switch metric.unit {
        case .bytes: return Units.formatBytes(metric.value)
        case .count:
            return metric.value == metric.value.rounded()
                ? Units.fixed(metric.value, decimals: 0) : Units.fixed(metric.value, decimals: 1)
        case .milliseconds: return Units.fixed(metric.value, decimals: 2)
        case .ratio: return Units.fixed(metric.value, decimals: 3)
        case .perSecond: return Units.fixed(metric.value, decimals: 1)
        }
    }

    /// Escapes text for a table cell (`MarkdownRenderer.cell`).
    static func cell(_ text: String) -> String { MarkdownRenderer.cell(text) }

    /// `text` as an inline code span (`MarkdownRenderer.code`).
    static func code(_ text: String, inTable: Bool = true) -> String { MarkdownRenderer.code(text, inTable: inTable) }
}
