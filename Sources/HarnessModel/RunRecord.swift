/// The lossless record of a run, `run.json`: every figure of every case, the checks and how the
/// report was rendered. `report.md`, `summary.csv`, `samples.csv` and the charts are renderings of
/// it, so `memharness report DIR` rebuilds them byte for byte from this file alone.
public struct RunRecord: Sendable, Hashable, Codable {
    /// The format of this file: readers refuse any other.
    public static let currentSchema = "memharness-run/2"

    public var schema: String
    public var report: RunReport
    /// The checks evaluated when the run ended (thresholds, leak expectations, baseline comparisons).
    public var checks: [CheckResult]
    /// How the renderings were made.
    public var rendering: RenderingOptions

    public init(report: RunReport, checks: [CheckResult], rendering: RenderingOptions = RenderingOptions()) {
        schema = Self.currentSchema
        self.report = report
        self.checks = checks
        self.rendering = rendering
    }
}

/// Options that shape a report folder's renderings, kept in the record so a re-render matches.
public struct RenderingOptions: Sendable, Hashable, Codable {
    /// Rows per case kept in the record and `samples.csv` (neighbours merged keeping maxima); 0 keeps all.
    public var samplesMaxRows: Int
    /// The charts' value scale; nil chooses per chart (log when peaks differ by more than 30x).
    public var chartScale: ValueScale?

    public init(samplesMaxRows: Int = 2000, chartScale: ValueScale? = nil) {
        self.samplesMaxRows = samplesMaxRows
        self.chartScale = chartScale
    }
}

/// The scale of a chart's value axis.
public enum ValueScale: String, Sendable, Hashable, Codable, CaseIterable {
    case linear, log
}
