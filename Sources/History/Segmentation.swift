import Foundation
import HarnessModel

/// A series cut into segments at candidate change points, and what a change between two segments must show to
/// hold (`ChangePointDetection` lists the rules): the changes that do not are merged away.
struct Segmentation {
    let values: [Double]
    /// The segments in series order; together they cover the series.
    private(set) var bounds: [Range<Int>]

    /// The series cut where each of `starts` (ascending, the first 0) begins a segment.
    init(values: [Double], starts: [Int]) {
        self.values = values
        bounds = zip(starts, starts.dropFirst() + [values.count]).map { $0..<$1 }
    }

    /// The median of segment `index`.
    func median(_ index: Int) -> Double { Statistics.median(Array(values[bounds[index]])) ?? 0 }

    /// Each value less its segment's median: the noise, once the segments are the series' levels.
    var residuals: [Double] {
        bounds.indices.flatMap { index in
            let median = median(index)
            return values[bounds[index]].map { $0 - median }
        }
    }

    /// Runs less segments: the degrees of freedom of a noise estimated around the segments' medians.
    var degreesOfFreedom: Int { max(values.count - bounds.count, 1) }

    /// The change from segment `index - 1` to segment `index`, with the p-value of its difference of medians
    /// against `noise` σ: the standard error of a median of k ≥ 3 normal values is √(π/2)·σ/√k, of one or two
    /// values (their mean) σ/√k; Student's t with `degreesOfFreedom`, as σ was estimated from these runs.
    func change(at index: Int, noise: Double) -> ChangePoint {
        let before = bounds[index - 1]
        let after = bounds[index]
        let medianBefore = median(index - 1)
        let medianAfter = median(index)
        func variance(_ count: Int) -> Double { (count <= 2 ? 1 : Double.pi / 2) / Double(count) }
        let standardError = noise * (variance(before.count) + variance(after.count)).squareRoot()
        let t = abs(medianAfter - medianBefore) / standardError
        return ChangePoint(
            index: after.lowerBound, medianBefore: medianBefore, medianAfter: medianAfter, runsBefore: before.count,
            runsAfter: after.count, pValue: StudentT.twoSidedPValue(t, degreesOfFreedom: degreesOfFreedom))
    }

    /// True when `change`, the change at segment `index`, holds: beyond the band, significant, persistent, and,
    /// when the newest run alone starts it, further out than any run before has strayed.
    func holds(_ change: ChangePoint, at index: Int, noise: Double, settings: ChangePointDetection.Settings) -> Bool {
        let band = noise * settings.bandFactor
        guard abs(change.step) > band, change.pValue < settings.maximumPValue,
            crossing(change, at: index, band: band) <= settings.maximumCrossing
        else { return false }
        let newestAlone = index == bounds.count - 1 && bounds[index].count == 1
        if newestAlone { return !strayedAsFar(change.step) }
        let rank = rankPValue(bounds[index], among: Array(values[bounds[index - 1]]), up: change.step > 0)
        return rank <= settings.maximumRankPValue
    }

    /// The chance that the k runs of `segment`, placed at random among themselves and `others` (n runs in all), all
    /// fall among the k + m most extreme in the direction `up`, m being the runs of `others` that reach the
    /// segment's least extreme run: C(k + m, k) / C(n, k). A rank test: it holds whatever the noise's shape, and
    /// it is never small for a few runs (two runs after two are 1/6, four after four 1/70).
    func rankPValue(_ segment: Range<Int>, among others: [Double], up: Bool) -> Double {
        let runs = values[segment]
        guard let edge = up ? runs.min() : runs.max() else { return 1 }
        let reaching = others.filter { up ? $0 >= edge : $0 <= edge }.count
        return min(
            exp(
                Self.logChoose(runs.count + reaching, runs.count)
                    - Self.logChoose(others.count + runs.count, runs.count)), 1)
    }

    /// The larger share, of the runs before the change and of those after it, that lie past the midpoint between
    /// the two medians, towards the other side's level: runs at the other level (a bimodal figure visits both).
    /// In a segment of three runs or more, whose median one run cannot move, a run further out than the other
    /// level and its band is an outlier, not a run at that level, and does not count; in one of one or two runs
    /// every run counts.
    func crossing(_ change: ChangePoint, at index: Int, band: Double) -> Double {
        let midpoint = (change.medianBefore + change.medianAfter) / 2
        func share(_ segment: Range<Int>, towards other: Double, up: Bool) -> Double {
            let crossing = values[segment].filter { value in
                let past = up ? value >= midpoint : value <= midpoint
                let beyond = up ? value > other + band : value < other - band
                return past && (segment.count <= 2 || !beyond)
            }
            return Double(crossing.count) / Double(segment.count)
        }
        let up = change.step > 0
        return max(
            share(bounds[index - 1], towards: change.medianAfter, up: up),
            share(bounds[index], towards: change.medianBefore, up: !up))
    }

    /// True when a run before the newest lies at least `step` from its segment's median, in the step's direction.
    func strayedAsFar(_ step: Double) -> Bool {
        bounds.indices.dropLast().contains { index in
            let median = median(index)
            return values[bounds[index]].contains { step > 0 ? $0 - median >= step : $0 - median <= step }
        }
    }

    /// The p-value of segment `index` as an excursion, when it lies beyond both its neighbours and the segment after
    /// it returns towards the segment before (within `band` of it, or nearer to it than to the excursion: a step
    /// followed by two runs of a bimodal figure in its other mode is an excursion from the new level; nil
    /// otherwise): the rank p-value of its runs among those of its two
    /// neighbours (`rankPValue`), times the n − k + 1 places an excursion of its k runs could start among the n.
    func excursionPValue(at index: Int, band: Double) -> Double? {
        guard index > 0, index + 1 < bounds.count else { return nil }
        let (before, level, after) = (median(index - 1), median(index), median(index + 1))
        guard (level - before) * (level - after) > 0,
            abs(after - before) <= band || abs(after - before) < abs(after - level)
        else { return nil }
        let around = Array(values[bounds[index - 1]] + values[bounds[index + 1]])
        let places = Double(around.count + 1)
        return min(places * rankPValue(bounds[index], among: around, up: level > before), 1)
    }

    /// ln C(n, k).
    static func logChoose(_ n: Int, _ k: Int) -> Double {
        lgamma(Double(n + 1)) - lgamma(Double(k + 1)) - lgamma(Double(n - k + 1))
    }

    /// Merges, one at a time and the weakest first (the largest p-value), the changes that do not hold against
    /// `noise` σ, then the excursions that are noise; true when anything merged.
    mutating func mergeChangesThatDoNotHold(noise: Double, settings: ChangePointDetection.Settings) -> Bool {
        var merged = false
        while bounds.count > 1 {
            var weakest: (index: Int, pValue: Double, isExcursion: Bool)?
            for index in 1..<bounds.count {
                let change = change(at: index, noise: noise)
                if !holds(change, at: index, noise: noise, settings: settings),
                    change.pValue > weakest?.pValue ?? -1
                {
                    weakest = (index, change.pValue, false)
                }
            }
            if weakest == nil {
                for index in bounds.indices.dropFirst().dropLast() {
                    guard let p = excursionPValue(at: index, band: noise * settings.bandFactor),
                        p >= settings.maximumPValue, p > weakest?.pValue ?? -1
                    else { continue }
                    weakest = (index, p, true)
                }
            }
            guard let weakest else { break }
            // A change merges its two segments; an excursion merges with both neighbours, at one level.
            let first = weakest.index - 1
            let last = weakest.isExcursion ? weakest.index + 1 : weakest.index
            bounds.replaceSubrange(first...last, with: [bounds[first].lowerBound..<bounds[last].upperBound])
            merged = true
        }
        return merged
    }
}
