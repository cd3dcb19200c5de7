import HarnessModel

/// The case that stands for a strategy in charts, with its samples.
struct RepresentativeCase {
    let strategy: String
    /// True when it was stopped by the memory limit (its samples run up to the kill).
    let killed: Bool
    let measurements: CaseMeasurements
    let samples: SampleSeries
}

/// The completed repetition of `strategy` whose peak is the median one; for a strategy with none
/// completed, the median one of those killed by the memory limit.
func representativeCase(_ run: ScenarioRun, strategy: String) -> RepresentativeCase? {
    let sampled = run.cases.filter { $0.strategy == strategy && $0.measurements?.samples != nil }
    let ok = sampled.filter { $0.status == .ok }
    let pool = (ok.isEmpty ? sampled.filter { $0.status == .killedByMemoryLimit } : ok)
        .compactMap { result in
            result.measurements.flatMap { m in
                m.samples.map {
                    RepresentativeCase(
                        strategy: strategy, killed: result.status == .killedByMemoryLimit, measurements: m, samples: $0)
                }
            }
        }
        .sorted { $0.measurements.peakAllocatedNetBytes < $1.measurements.peakAllocatedNetBytes }
    guard !pool.isEmpty else { return nil }
    return pool[(pool.count - 1) / 2]
}

/// Reduces a time series to at most `buckets` buckets, keeping each bucket's minimum and maximum in
/// time order, so a long run still gives a small chart and no peak (or trough) disappears.
func minMaxDownsample(times: [Double], values: [Double], buckets: Int) -> [(Double, Double)] {
    guard times.count > buckets * 2, buckets > 0 else { return Array(zip(times, values)) }
    var points: [(Double, Double)] = []
    let size = (times.count + buckets - 1) / buckets
    var start = 0
    while start < times.count {
        let end = min(start + size, times.count)
        var low = start
        var high = start
        for index in start..<end {
            if values[index] < values[low] { low = index }
            if values[index] > values[high] { high = index }
        }
        for index in [low, high].sorted()
        where points.last.map({ $0.0 != times[index] || $0.1 != values[index] }) ?? true {
            points.append((times[index], values[index]))
        }
        start = end
    }
    return points
}
