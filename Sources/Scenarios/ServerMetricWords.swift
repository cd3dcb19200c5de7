import HarnessModel

// What the server metrics are, in words, for thresholds and `--help` (the model names them and gives their units).

extension PerRequestFigures {
    /// What each metric is, by base name, for thresholds and `--help`: those with a 95% interval only when a step has
    /// several measured rounds.
    static let descriptions: [(name: String, unit: Metric.Unit, summary: String)] = [
        ("allocationsPerRequest", .count, "allocation calls per request, the minimum over the measured rounds"),
        ("bytesPerRequest", .bytes, "bytes allocated per request, the minimum over the measured rounds"),
        ("liveGrowthPer1000Requests", .bytes, "live bytes gained per 1,000 requests (Theil–Sen over the rounds)"),
        ("liveGrowthPer1000RequestsLow", .bytes, "the lower end of its 95% interval (2 measured rounds or more)"),
        ("liveGrowthPer1000RequestsHigh", .bytes, "the upper end of its 95% interval (2 measured rounds or more)"),
        ("peakPerConcurrentRequest", .bytes, "the sampled peak above the round's start, per connection"),
    ]
}

extension ServerStep {
    /// The base names and units of `allocationMetrics`, with what they are.
    static let allocationMetricDescriptions: [(name: String, unit: Metric.Unit, summary: String)] = [
        ("allocations", .count, "allocation calls during the step (the agent's exact count)"),
        ("allocatedBytes", .bytes, "bytes allocated during the step (the agent's exact count)"),
    ]
}
