import Foundation
import HarnessModel

/// A step in a series: the run where a figure moved to a new level and stayed there.
public struct ChangePoint: Sendable, Hashable, Codable {
    /// The position in the series of the first run at the new level.
    public var index: Int
    /// The median of the segment before and of the segment from `index` on, in the figure's unit.
    public var medianBefore: Double
    public var medianAfter: Double
    /// Runs in the segment before and after.
    public var runsBefore: Int
    public var runsAfter: Int
    /// The p-value of the step: the chance of a difference of medians this large between segments this long
    /// from the series' noise alone (two-sided Student's t test, the noise σ of `SeriesNoise` estimated from
    /// the series' runs). Smaller is surer.
    public var pValue: Double

    /// (after − before) / |before|; the absolute difference over the noise when `medianBefore` is 0.
    public var relativeStep: Double {
        medianBefore != 0 ? (medianAfter - medianBefore) / abs(medianBefore) : (medianAfter > 0 ? .infinity : 0)
    }
    /// The step in the figure's unit.
    public var step: Double { medianAfter - medianBefore }
}

/// What change-point detection found in a series.
public struct SeriesAnalysis: Sendable, Hashable {
    /// The series' noise σ (`SeriesNoise`): a robust standard deviation of the values around their segment's
    /// median, never below half the estimate from successive differences nor the figure's floor (its quantum,
    /// a share of its level).
    public var noise: Double
    /// Half the width of the noise band: `bandFactor` × `noise`. A step must exceed it to be reported.
    public var band: Double
    /// The segments between accepted change points (and before the newest run's step): first index, end index
    /// (exclusive) and median.
    public var segments: [Segment]
    /// Accepted change points, in series order: steps that persisted, with at least two runs at the new level.
    public var changePoints: [ChangePoint]
    /// The newest run alone, beyond the noise of the runs before it and further out than any of them strayed: a
    /// step if the runs after it stay there (it becomes a change point), noise if they return. `history gate`
    /// judges it; nil when the newest run is at its level.
    public var newestRunStep: ChangePoint?

    /// Every step found: the change points, then the newest run's.
    public var steps: [ChangePoint] { changePoints + (newestRunStep.map { [$0] } ?? []) }

    public struct Segment: Sendable, Hashable {
        public var start: Int
        public var end: Int
        public var median: Double
    }
}

/// Change-point detection by PELT (Killick, Fearnhead & Eckley, "Optimal detection of changepoints with a
/// linear computational cost", JASA 2012) with a normal mean-change cost and the modified BIC penalty
/// (3 ln n per change, Zhang & Siegmund 2007), then each change tested against the series' own noise
/// (`SeriesNoise`) and kept only when it holds.
///
/// Why PELT and not E-Divisive means (Matteson & James 2014, which MongoDB runs on its CI history): both
/// find steps without a hand-set tolerance, but E-Divisive costs O(n²) per split and its permutation test
/// repeats that a hundred times or more, too slow for `history show` over 10,000 runs of 100 figures in two
/// seconds; PELT finds the exact optimum of its cost in about linear time. Memory figures step from one
/// level to another (a buffer doubled, a cache bounded), which is the mean-change model PELT's cost assumes.
///
/// The steps: (1) a first noise σ₀ from successive differences (steps barely move it), at least the figure's
/// floor (its quantum, 0.1% of its level); (2) PELT on the series scaled by σ₀, segments of at least 2 runs
/// except the last, which may be the newest run alone (so a gate sees a step the run it starts); (3) the noise
/// σ from the values around their segments' medians, at least σ₀/2 and the floor; (4) the changes that do not
/// hold are merged away, the weakest first, then σ is estimated again over the merged segments until nothing
/// merges. A change holds when (`Segmentation`):
/// - the difference of the medians exceeds the noise band (`bandFactor` × σ, 2.5σ) with a p-value below
///   `maximumPValue` (Student's t: σ was estimated from these runs, and a short history is weak evidence);
/// - it persists: at most `maximumCrossing` (10%) of the runs on either side lie past the midpoint between
///   the medians (a run or two at another level, or a bimodal figure's runs in both modes, is not a step), and,
///   with two runs or more after it, their ranks among the runs before say so too (`maximumRankPValue`, 0.05:
///   two runs after two never do, however small the noise estimated from them);
/// - it is not an excursion: a segment beyond both its neighbours, whose next segment returns towards where it was
///   (within the band, or nearer to that level than to the excursion's), is noise unless its runs are, beyond
///   chance, the extreme ones of the stretch around it (a rank test that trusts no noise estimate: two runs in
///   eight never are);
/// - the newest run alone starts it only when no earlier run strayed as far from its segment's median, the
///   same way: a run no further out than the series has been before is not news.
///
/// The factors (2.5σ, σ₀/2, 3 ln n, 10%) were chosen on seeded series and on series recorded from real runs of
/// unchanged programs (`RecordedSeries`); `make bench-history` measures them.
public enum ChangePointDetection {
    /// What the detection accepts.
    public struct Settings: Sendable, Hashable {
        /// The band's half-width in noise units: a step within it is noise.
        public var bandFactor: Double
        /// The largest p-value of an accepted change, and of an excursion kept as two changes.
        public var maximumPValue: Double
        /// The smallest noise assumed, relative to the series' median: a figure that never moved (an exact
        /// allocation count) would otherwise have zero noise and every byte would be a step.
        public var relativeNoiseFloor: Double
        /// The smallest noise assumed for a figure that follows the page cache (`Figure.followsPageCache`), relative
        /// to its median: the mapped files of an unchanged program, run 8 times during a build, moved 0.4%, 0.8% and
        /// 1.2% (the page cache shrinking under reclaim), where 0.1% took the first for a step.
        public var pageCacheNoiseFloor: Double
        /// The largest quantum a byte figure is taken to move in: a page (`SeriesNoise.quantum`).
        public var largestQuantum: Double
        /// The largest share of the runs on either side of a change that may lie past the midpoint between
        /// the two medians.
        public var maximumCrossing: Double
        /// The largest rank p-value of a change with two runs or more after it (`Segmentation.rankPValue`): two
        /// runs at a new level after two are not enough, however small the noise looks.
        public var maximumRankPValue: Double

        /// The newest runs searched (0: all). PELT's cost grows with the square of the runs between two change
        /// points; 1,000 runs keep `history show` on 10,000 runs of 100 figures within two seconds.
        public var window: Int

        public init(
            bandFactor: Double = 2.5, maximumPValue: Double = 0.01, relativeNoiseFloor: Double = 0.001,
            pageCacheNoiseFloor: Double = 0.01, largestQuantum: Double = 4096, maximumCrossing: Double = 0.1,
            maximumRankPValue: Double = 0.05,
            window: Int = 1000
        ) {
            self.window = window
            self.bandFactor = bandFactor
            self.maximumPValue = maximumPValue
            self.relativeNoiseFloor = relativeNoiseFloor
            self.pageCacheNoiseFloor = pageCacheNoiseFloor
            self.largestQuantum = largestQuantum
            self.maximumCrossing = maximumCrossing
            self.maximumRankPValue = maximumRankPValue
        }
    }

    /// Finds the change points of `values` (in series order), among the newest `settings.window` of them: the
    /// runs before are one segment, not searched. `isBytes`: the values are bytes, which may move in pages;
    /// `followsPageCache`: they count resident file pages (`Figure.followsPageCache`).
    public static func analyse(
        _ values: [Double], isBytes: Bool = false, followsPageCache: Bool = false, settings: Settings = Settings()
    ) -> SeriesAnalysis {
        let offset = settings.window > 0 ? max(values.count - settings.window, 0) : 0
        let kind = (isBytes: isBytes, followsPageCache: followsPageCache)
        guard offset > 0 else { return analyseAll(values, kind: kind, settings: settings) }
        var analysis = analyseAll(Array(values[offset...]), kind: kind, settings: settings)
        for index in analysis.segments.indices {
            analysis.segments[index].start += offset
            analysis.segments[index].end += offset
        }
        for index in analysis.changePoints.indices { analysis.changePoints[index].index += offset }
        let earlier = SeriesAnalysis.Segment(
            start: 0, end: offset, median: Statistics.median(Array(values[..<offset])) ?? 0)
        analysis.segments.insert(earlier, at: 0)
        return analysis
    }

    private static func analyseAll(
        _ values: [Double], kind: (isBytes: Bool, followsPageCache: Bool), settings: Settings
    ) -> SeriesAnalysis {
        let n = values.count
        let floor = SeriesNoise.floor(
            of: values, isBytes: kind.isBytes, followsPageCache: kind.followsPageCache, settings: settings)
        guard n >= 2 else {
            return SeriesAnalysis(
                noise: floor, band: floor * settings.bandFactor,
                segments: n == 1 ? [.init(start: 0, end: 1, median: values[0])] : [], changePoints: [],
                newestRunStep: nil)
        }
        let differences = zip(values.dropFirst(), values).map { $0 - $1 }
        let first = SeriesNoise(sigma: SeriesNoise.spread(differences) / 2.0.squareRoot(), floor: floor)
        let cuts = pelt(values.map { $0 / first.sigma }, penalty: 3 * log(Double(n)))
        var segmentation = Segmentation(values: values, starts: [0] + cuts)
        var noise: SeriesNoise
        // Merging only widens the segments the residuals are taken around, so σ only grows and this ends.
        repeat {
            noise = SeriesNoise(sigma: max(SeriesNoise.spread(segmentation.residuals), first.sigma / 2), floor: floor)
        } while segmentation.mergeChangesThatDoNotHold(noise: noise.sigma, settings: settings)
        let segments = segmentation.bounds.map {
            SeriesAnalysis.Segment(
                start: $0.lowerBound, end: $0.upperBound, median: Statistics.median(Array(values[$0])) ?? 0)
        }
        var changes = (1..<max(segmentation.bounds.count, 1)).map { segmentation.change(at: $0, noise: noise.sigma) }
        // Only the newest run may be a segment of one run: a step it starts alone has not persisted yet.
        let newest = changes.last?.runsAfter == 1 ? changes.popLast() : nil
        return SeriesAnalysis(
            noise: noise.sigma, band: noise.band(settings), segments: segments, changePoints: changes,
            newestRunStep: newest)
    }

    /// PELT over `z` (values in noise units) with the normal mean-change cost Σ(z − mean)²: the indices where
    /// a new segment starts, ascending. Segments hold at least 2 values, the last at least 1.
    static func pelt(_ z: [Double], penalty: Double) -> [Int] {
        let n = z.count
        var sum = [0.0]
        var sumOfSquares = [0.0]
        sum.reserveCapacity(n + 1)
        sumOfSquares.reserveCapacity(n + 1)
        for value in z {
            sum.append(sum[sum.count - 1] + value)
            sumOfSquares.append(sumOfSquares[sumOfSquares.count - 1] + value * value)
        }
        func cost(_ start: Int, _ end: Int) -> Double {
            let length = Double(end - start)
            let s = sum[end] - sum[start]
            return sumOfSquares[end] - sumOfSquares[start] - s * s / length
        }
        var best = [Double](repeating: .infinity, count: n + 1)
        var previous = [Int](repeating: 0, count: n + 1)
        best[0] = -penalty
        var candidates: [Int] = [0]
        // Buffers reused from one end to the next: the loop runs n times over the candidates.
        var kept: [Int] = []
        var costs: [(start: Int, total: Double)] = []
        for end in 1...n {
            let minimumLength = end == n ? 1 : 2
            kept.removeAll(keepingCapacity: true)
            costs.removeAll(keepingCapacity: true)
            for start in candidates {
                guard end - start >= minimumLength, best[start].isFinite else {
                    kept.append(start)
                    continue
                }
                let total = best[start] + cost(start, end)
                costs.append((start, total))
                if total + penalty < best[end] {
                    best[end] = total + penalty
                    previous[end] = start
                }
            }
            // Pruning: a start whose cost already exceeds the optimum can never start the best last segment.
            for entry in costs where entry.total <= best[end] { kept.append(entry.start) }
            kept.append(end)
            swap(&candidates, &kept)
        }
        var cuts: [Int] = []
        var end = n
        while end > 0 {
            let start = previous[end]
            if start > 0 { cuts.append(start) }
            end = start
        }
        return cuts.reversed()
    }
}
