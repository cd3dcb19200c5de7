import ArgumentParser
import HarnessModel

/// A chart scale as `--chart-scale` names it: `auto` (log when peaks differ by more than 30x), `linear` or `log`.
enum ChartScaleChoice: String, Sendable, Hashable, CaseIterable, ExpressibleByArgument {
    case auto, linear, log

    /// The scale `RenderingOptions.chartScale` takes: nil for `auto`, chosen per chart.
    var scale: ValueScale? { ValueScale(rawValue: rawValue) }
}
