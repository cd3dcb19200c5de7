/// A chart scale as options name it: `auto` (log when peaks differ by more than 30x), `linear` or `log`.
public enum ChartScaleChoice: String, Sendable, Hashable, CaseIterable {
    case auto, linear, log

    /// The scale `RenderingOptions.chartScale` takes: nil for `auto`, chosen per chart.
    public var scale: ValueScale? { ValueScale(rawValue: rawValue) }
}
