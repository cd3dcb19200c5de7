import HarnessModel

/// The noise of one figure measured over runs: how far its runs stray from their level when nothing changed.
///
/// One model for every judgement of a figure against its own runs: the change points' band and p-values, the
/// gate, `history diff`'s band. It cannot collapse to zero, which a robust estimate alone does on the series
/// memory figures make: RSS and resident bytes move in whole pages (most runs equal, so the MAD and Qn of the
/// differences are 0), exact counts never move, and jemalloc's resident figure is bimodal (a MiB more in some
/// runs). So σ is the largest of:
/// - the robust spread of the values around their level (Qn, Rousseeuw & Croux 1993, up to 400 values; the
///   MAD beyond), and half the spread of successive differences over √2 (differences overstate the noise next
///   to a step, residuals understate it when a segmentation cuts too often);
/// - the figure's quantum q, the largest power of two up to a page that divides every value of a byte figure:
///   a figure read in whole quanta moves by one now and then in an unchanged program (the stack's random offset at
///   exec spans the same depth over one more page in some runs: rssStacks 32 KiB in 6 runs, 36 KiB in 2), so σ is at
///   least q/2 and its band (2.5σ) holds a one-quantum move;
/// - a share of the level (`relativeNoiseFloor`, 0.1%): a figure that never moved would otherwise make every byte
///   a step; 1% (`pageCacheNoiseFloor`) for a figure that counts resident file pages, which follow the page cache
///   the machine's other work leaves, not the program.
/// What the floors cannot see (a run that strays far now and then) is left to the change points' own tests: a
/// step must order the runs either side of it, and an excursion that returns is noise (`ChangePointDetection`).
public struct SeriesNoise: Sendable, Hashable {
    /// The standard deviation of the noise, in the figure's unit; at least `floor`.
    public var sigma: Double
    /// The smallest σ the figure can have: the larger of its quantum's rounding noise and the relative floor;
    /// never 0.
    public var floor: Double

    public init(sigma: Double, floor: Double) {
        self.sigma = max(sigma, floor)
        self.floor = floor
    }

    /// The noise of `values`, runs of one figure at one level (the repetitions of one run, or a stretch of
    /// history nothing changed in).
    public init(
        values: [Double], isBytes: Bool, followsPageCache: Bool = false,
        settings: ChangePointDetection.Settings = .init()
    ) {
        let floor = Self.floor(of: values, isBytes: isBytes, followsPageCache: followsPageCache, settings: settings)
        let level = Statistics.median(values) ?? 0
        let differences = zip(values.dropFirst(), values).map { $0 - $1 }
        let fromDifferences = Self.spread(differences) / 2.0.squareRoot()
        self.init(sigma: max(Self.spread(values.map { $0 - level }), fromDifferences / 2), floor: floor)
    }

    /// The band a difference of levels must exceed to be more than noise: `bandFactor` × σ.
    public func band(_ settings: ChangePointDetection.Settings = .init()) -> Double { sigma * settings.bandFactor }

    /// The smallest σ of a figure with these values: half its quantum (a one-quantum move stays within the band),
    /// `relativeNoiseFloor` × |median| (`pageCacheNoiseFloor` × |median| for a
    /// figure that follows the page cache), and 1e-9 (a figure that is nothing in every run still has a positive
    /// noise).
    public static func floor(
        of values: [Double], isBytes: Bool, followsPageCache: Bool = false, settings: ChangePointDetection.Settings
    ) -> Double {
        let level = Statistics.median(values) ?? 0
        let quantum = isBytes ? Self.quantum(of: values, largest: settings.largestQuantum) : 0
        let relative = followsPageCache ? settings.pageCacheNoiseFloor : settings.relativeNoiseFloor
        return max(abs(level) * relative, quantum / 2, 1e-9)
    }

    /// The largest power of two, at most `largest`, that divides every value (whole numbers only): 4096 for a
    /// figure counted in pages, 16 for one summed from size classes; 0 when a value is not a whole number or
    /// every value is 0. Powers of two only, and capped: two levels of an exact figure (1 MiB, 2 MiB) share a
    /// far larger divisor, which is their step, not their resolution.
    public static func quantum(of values: [Double], largest: Double) -> Double {
        guard largest >= 1, values.contains(where: { $0 != 0 }) else { return 0 }
        var quantum = UInt64(largest)
        for value in values where value != 0 {
            guard value == value.rounded(), abs(value) < 0x1p62 else { return 0 }
            let whole = UInt64(abs(value))
            // The largest power of two dividing `whole`: its lowest set bit.
            quantum = min(quantum, whole & (~whole &+ 1))
        }
        return Double(quantum)
    }

    /// MAD × this estimates the standard deviation of normal noise.
    static let madScale = 1.4826

    /// A robust standard deviation of `values`: Rousseeuw and Croux's Qn (82% efficient at the normal, where the
    /// MAD is 37%: with 20 runs the MAD's own error would often hide a 5% step) up to `qnLimit` values, whose
    /// pairs it sorts; the MAD (1.4826 × MAD) beyond, where it is precise enough. 0 when most values are equal.
    public static func spread(_ values: [Double]) -> Double {
        let n = values.count
        guard n >= 2, n <= qnLimit else { return mad(values) * madScale }
        var distances: [Double] = []
        distances.reserveCapacity(n * (n - 1) / 2)
        for i in 0..<n { for j in (i + 1)..<n { distances.append(abs(values[i] - values[j])) } }
        distances.sort()
        let h = n / 2 + 1
        // Croux & Rousseeuw (1992): small-sample factors for n ≤ 9, then n/(n+1.4) (odd) or n/(n+3.8) (even).
        let small = [0.399, 0.994, 0.512, 0.844, 0.611, 0.857, 0.669, 0.872]
        let factor = n <= 9 ? small[n - 2] : Double(n) / (Double(n) + (n % 2 == 1 ? 1.4 : 3.8))
        return 2.2219 * distances[h * (h - 1) / 2 - 1] * factor
    }

    /// Values above which `spread` uses the MAD: Qn sorts n²/2 distances.
    static let qnLimit = 400

    /// The median absolute deviation from the median.
    static func mad(_ values: [Double]) -> Double {
        guard let median = Statistics.median(values) else { return 0 }
        return Statistics.median(values.map { abs($0 - median) }) ?? 0
    }
}
