import HarnessModel

/// One side of a run-to-run comparison: a figure's median and, from 6 repetitions on, its median's 95% interval.
public struct Measured: Sendable, Hashable {
    /// The median (or the one value).
    public var value: Double
    /// The 95% interval of the median (`MedianInterval`); nil with fewer than 6 values.
    public var interval: MedianInterval?

    /// One value, with no interval: a median a record kept without its repetitions (a baseline, a history record).
    public init(value: Double) {
        self.value = value
        interval = nil
    }

    /// The median of `values` and its interval; nil when `values` is empty.
    public init?(values: [Double]) {
        guard let median = Statistics.median(values) else { return nil }
        value = median
        interval = MedianInterval(values)
    }
}

/// How a figure moved between two runs, judged against the noise (`RunToRun.compare`).
public struct FigureChange: Sendable, Hashable {
    /// Which way a figure moved beyond its noise, if it did.
    public enum Direction: String, Sendable, Hashable {
        case unchanged, increased, decreased
    }

    /// The earlier value.
    public var before: Double
    /// The later median, with its interval when it has one.
    public var after: Measured
    /// Half the width of the noise band around `before` (`NoiseBand.halfWidth(around:)`), the figure's unit.
    public var band: Double
    /// A change no larger than this never counts, the figure's unit.
    public var floor: Double

    /// After minus before, the figure's unit.
    public var change: Double { after.value - before }
    /// The change relative to before (infinite when before is 0 and the figure moved).
    public var relativeChange: Double { before != 0 ? change / abs(before) : (change == 0 ? 0 : .infinity) }
    /// True when the change is beyond the floor.
    public var beyondFloor: Bool { abs(change) > floor }
    /// True when the later median, or its whole interval when it has one, lies outside before ± band on the side of
    /// the change.
    public var outsideBand: Bool {
        change > 0
            ? (after.interval?.lower ?? after.value) > before + band
            : (after.interval?.upper ?? after.value)
                < before - band
    }
    /// `increased` or `decreased` when the change is beyond the floor and outside the band, else `unchanged`.
    public var direction: Direction {
        guard beyondFloor && outsideBand && change != 0 else { return .unchanged }
        return change > 0 ? .increased : .decreased
    }
}

/// The one comparison of a figure between two runs, behind `compare` and `run --baseline` (a baseline's medians),
/// `compare --against` (two runs' allocation sites) and `history diff` (two recorded runs).
public enum RunToRun {
    /// How `after` stands against `before` under `noise`: moved when the change exceeds the floor and `after` (its
    /// whole interval, when it has one) lies outside `before` ± the band. Both runs' noise is thus allowed for: the
    /// earlier run's (or the series') in the band, the later run's in its interval.
    public static func compare(before: Double, after: Measured, noise: NoiseBand) -> FigureChange {
        FigureChange(before: before, after: after, band: noise.halfWidth(around: before), floor: noise.floor)
    }
}
