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
    /// from the series' noise alone (two-sided normal test, the noise from the MAD). Smaller is surer.
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
    /// The series' noise: a robust standard deviation of the values around their segment's median (1.4826 ×
    /// MAD), never below half the estimate from successive differences nor the floor (see
    /// `ChangePointDetection.Settings`).
    public var noise: Double
    /// Half the width of the noise band: `bandFactor` × `noise`. A step must exceed it to be reported.
    public var band: Double
    /// The segments between accepted change points: first index, end index (exclusive) and median.
    public var segments: [Segment]
    /// Accepted change points, in series order.
    public var changePoints: [ChangePoint]

    public struct Segment: Sendable, Hashable {
        public var start: Int
        public var end: Int
        public var median: Double
    }
}

/// Change-point detection by PELT (Killick, Fearnhead & Eckley, "Optimal detection of changepoints with a
/// linear computational cost", JASA 2012) with a normal mean-change cost and the modified BIC penalty
/// (3 ln n per change, Zhang & Siegmund 2007), then each change tested against the series' own noise.
///
/// Why PELT and not E-Divisive means (Matteson & James 2014, which MongoDB runs on its CI history): both
/// find steps without a hand-set tolerance, but E-Divisive costs O(n²) per split and its permutation test
/// repeats that a hundred times or more, too slow for `history show` over 10,000 runs of 100 figures in two
/// seconds; PELT finds the exact optimum of its cost in about linear time. Memory figures step from one
/// level to another (a buffer doubled, a cache bounded), which is the mean-change model PELT's cost assumes.
///
/// The steps: (1) the noise σ₀ from successive differences (steps barely move it), by Qn (Rousseeuw & Croux
/// 1993) up to 400 runs and by the MAD beyond; (2) PELT on
/// the series scaled by σ₀, segments of at least 2 runs except the last, which may be the newest run alone
/// (so a gate sees a step the run it starts); (3) the noise σ: 1.4826 × the MAD of the values around their
/// segments' medians, at least σ₀/2 (differences overstate the noise next to a step; residuals understate it
/// when PELT cuts too often); (4) each change kept when the difference of medians exceeds the noise band
/// (`bandFactor` × σ, 2.5σ) and its p-value is below `maximumPValue`; a rejected change merges its segments.
///
/// The factors (2.5σ, σ₀/2, 3 ln n) were chosen on seeded series before the benchmark's seed: they find a 5%
/// step in 20 runs with 1% noise at its run about 98% of the time and flag under 1% of flat series of 50.
public enum ChangePointDetection {
    /// What the detection accepts.
    public struct Settings: Sendable, Hashable {
        /// The band's half-width in noise units: a step within it is noise.
        public var bandFactor: Double
        /// The largest p-value of an accepted change.
        public var maximumPValue: Double
        /// The smallest noise assumed, relative to the series' median: a figure that never moved (an exact
        /// allocation count) would otherwise have zero noise and every byte would be a step.
        public var relativeNoiseFloor: Double

        /// The newest runs searched (0: all). PELT's cost grows with the square of the runs between two change
        /// points; 1,000 runs keep `history show` on 10,000 runs of 100 figures within two seconds.
        public var window: Int

        public init(
            bandFactor: Double = 2.5, maximumPValue: Double = 0.01, relativeNoiseFloor: Double = 0.001,
            window: Int = 1000
        ) {
            self.window = window
            self.bandFactor = bandFactor
            self.maximumPValue = maximumPValue
            self.relativeNoiseFloor = relativeNoiseFloor
        }
    }

    /// MAD × this estimates the standard deviation of normal noise.
    static let madScale = 1.4826

    /// Finds the change points of `values` (in series order), among the newest `settings.window` of them: the
    /// runs before are one segment, not searched.
    public static func analyse(_ values: [Double], settings: Settings = Settings()) -> SeriesAnalysis {
        let offset = settings.window > 0 ? max(values.count - settings.window, 0) : 0
        guard offset > 0 else { return analyseAll(values, settings: settings) }
        var analysis = analyseAll(Array(values[offset...]), settings: settings)
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

    private static func analyseAll(_ values: [Double], settings: Settings) -> SeriesAnalysis {
        let n = values.count
        let level = Statistics.median(values) ?? 0
        // The floor also keeps the noise positive when the median is 0 (a figure that is mostly nothing).
        let floor = max(abs(level) * settings.relativeNoiseFloor, 1e-9)
        guard n >= 2 else {
            return SeriesAnalysis(
                noise: floor, band: floor * settings.bandFactor,
                segments: n == 1 ? [.init(start: 0, end: 1, median: values[0])] : [], changePoints: [])
        }
        let differences = zip(values.dropFirst(), values).map { $0 - $1 }
        let noiseGuess = max(spread(differences) / 2.0.squareRoot(), floor)
        let cuts = pelt(values.map { $0 / noiseGuess }, penalty: 3 * log(Double(n)))
        var bounds = zip([0] + cuts, cuts + [n]).map { (start: $0, end: $1) }
        var residuals: [Double] = []
        for bound in bounds {
            let segment = Array(values[bound.start..<bound.end])
            let median = Statistics.median(segment) ?? 0
            residuals += segment.map { $0 - median }
        }
        let noise = max(mad(residuals) * madScale, noiseGuess / 2)
        let band = noise * settings.bandFactor
        var accepted: [ChangePoint] = []
        var index = 1
        while index < bounds.count {
            let before = Array(values[bounds[index - 1].start..<bounds[index - 1].end])
            let after = Array(values[bounds[index].start..<bounds[index].end])
            let change = changePoint(before: before, after: after, at: bounds[index].start, noise: noise)
            if abs(change.step) > band && change.pValue < settings.maximumPValue {
                accepted.append(change)
                index += 1
            } else {
                bounds[index - 1].end = bounds[index].end
                bounds.remove(at: index)
            }
        }
        let segments = bounds.map {
            SeriesAnalysis.Segment(
                start: $0.start, end: $0.end, median: Statistics.median(Array(values[$0.start..<$0.end])) ?? 0)
        }
        // Medians of merged segments changed: the accepted steps are restated over the final segments.
        let changes = zip(segments, segments.dropFirst()).map { before, after in
            changePoint(
                before: Array(values[before.start..<before.end]), after: Array(values[after.start..<after.end]),
                at: after.start, noise: noise)
        }
        return SeriesAnalysis(noise: noise, band: band, segments: segments, changePoints: changes)
    }

    /// A change between two segments, with the p-value of its difference of medians: the standard error of a
    /// median of k ≥ 3 normal values is √(π/2)·σ/√k.
    static func changePoint(before: [Double], after: [Double], at index: Int, noise: Double) -> ChangePoint {
        let medianBefore = Statistics.median(before) ?? 0
        let medianAfter = Statistics.median(after) ?? 0
        // The median of one or two values is their mean: its variance is σ²/k; from three on, (π/2)·σ²/k.
        func variance(_ count: Int) -> Double { (count <= 2 ? 1 : Double.pi / 2) / Double(count) }
        let standardError = noise * (variance(before.count) + variance(after.count)).squareRoot()
        let z = abs(medianAfter - medianBefore) / standardError
        return ChangePoint(
            index: index, medianBefore: medianBefore, medianAfter: medianAfter, runsBefore: before.count,
            runsAfter: after.count, pValue: erfc(z / 2.0.squareRoot()))
    }

    /// A robust standard deviation of `values`: Rousseeuw and Croux's Qn (82% efficient at the normal, where the
    /// MAD is 37%: with 20 runs the MAD's own error would often hide a 5% step) up to `qnLimit` values, whose
    /// pairs it sorts; the MAD (1.4826 × MAD) beyond, where it is precise enough.
    static func spread(_ values: [Double]) -> Double {
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
