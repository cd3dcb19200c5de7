import HarnessModel

/// The one noise model of run-to-run differences: how far a figure moves between two runs by itself.
///
/// The band around the earlier value reaches `factor` standard deviations of the difference, never less than
/// `relative` × |earlier| nor `absolute`; a change within `floor` never counts. Where the standard deviation comes
/// from depends on what was measured, never on the command: a figure's repetitions (a baseline's derived tolerance,
/// `ToleranceDerivation`), its series across commits (the history's noise, found by change-point detection), the
/// byte sampling of allocation stacks (`sampling(before:after:least:)`).
public struct NoiseBand: Sendable, Hashable {
    /// The standard deviation of the difference, the figure's unit; 0 when only floors are known.
    public var sigma: Double
    /// How many standard deviations the band reaches.
    public var factor: Double
    /// The least half-width, relative to the earlier value (a figure that never moved can still move a little).
    public var relative: Double
    /// The least half-width, the figure's unit.
    public var absolute: Double
    /// A change no larger than this never counts, whatever the band, the figure's unit.
    public var floor: Double

    public init(sigma: Double = 0, factor: Double = 0, relative: Double = 0, absolute: Double = 0, floor: Double = 0) {
        self.sigma = sigma
        self.factor = factor
        self.relative = relative
        self.absolute = absolute
        self.floor = floor
    }

    /// Half the band's width around `before`: max(`factor` × `sigma`, `relative` × |before|, `absolute`).
    public func halfWidth(around before: Double) -> Double {
        max(factor * sigma, relative * abs(before), absolute)
    }

    /// A baseline's band: `tolerance` of the baseline's value (derived from its repetitions' noise by
    /// `ToleranceDerivation`, or given), and the floor.
    public static func tolerance(_ tolerance: Double, floor: Double) -> NoiseBand {
        NoiseBand(relative: tolerance, floor: floor)
    }

    /// The band of a series of recorded runs: its half-width as change-point detection measured it (`factor` × the
    /// series' robust noise; `relative` × |before| for a figure without a series).
    public static func series(halfWidth: Double) -> NoiseBand {
        NoiseBand(absolute: halfWidth)
    }

    /// Two byte-sampled figures (an allocation site's live bytes in two runs recorded with stacks): each sampled
    /// allocation stands for `mean` bytes, so a figure of B bytes varies by about √(B × mean) (the variance of Poisson
    /// byte sampling, at most B × mean for any mix of sizes). The band reaches `samplingFactor` standard deviations of
    /// the difference, and never less than `least` (the site listing's 2% of the peak).
    public static func sampling(
        before: (bytes: Double, mean: Double), after: (bytes: Double, mean: Double), least: Double
    )
        -> NoiseBand
    {
        let variance = max(before.bytes, 0) * max(before.mean, 0) + max(after.bytes, 0) * max(after.mean, 0)
        return NoiseBand(sigma: variance.squareRoot(), factor: samplingFactor, absolute: least)
    }

    /// Two standard deviations: a site's difference within it is what sampling alone gives about 95% of the time.
    public static let samplingFactor = 2.0
}
