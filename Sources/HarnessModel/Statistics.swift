/// Order statistics over plain values.
public enum Statistics {
    /// The median (mean of the two middle values for an even count); nil when empty.
    public static func median(_ values: [Double]) -> Double? {
        percentile(values, 50)
    }

    /// The `p`-th percentile (0...100) with linear interpolation between closest ranks; nil when empty.
    public static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        // Percentiles outside 0...100 are meaningless; clamp so a caller's rounding cannot index out of range.
        let rank = min(max(p, 0), 100) / 100 * Double(sorted.count - 1)
        let lower = Int(rank.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        let weight = rank - Double(lower)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * weight
    }

    /// Spread of repetitions as (max - min) / median, in percent; nil with fewer than two values or a zero median.
    public static func spreadPercent(_ values: [Double]) -> Double? {
        guard values.count >= 2, let median = median(values), median != 0,
            let low = values.min(), let high = values.max()
        else { return nil }
        return (high - low) / abs(median) * 100
    }
}
