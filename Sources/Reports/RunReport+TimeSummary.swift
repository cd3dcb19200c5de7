import HarnessModel

// Where a run's time went, in words: the line `--show-time` prints and the seconds the report's time
// section gives.

extension RunReport {
    /// `calibration 3.1 s (9 cases), live-query 20.4 s (15 cases)`, slowest first; nil without case times.
    var timeSummary: String? {
        let times = scenarioTimes.sorted { $0.nanoseconds > $1.nanoseconds }
        guard !times.isEmpty else { return nil }
        let total = times.reduce(Int64(0)) { $0 + $1.nanoseconds }
        let cases = times.reduce(0) { $0 + $1.cases }
        let elapsed = elapsedNanoseconds.map { " in \(Units.formatSeconds($0)) of wall time" } ?? ""
        return "\(cases) cases took \(Units.formatSeconds(total))\(elapsed): "
            + times.map { "\($0.scenario) \(Units.formatSeconds($0.nanoseconds)) (\($0.cases))" }.joined(
                separator: ", ")
    }
}

extension Units {
    /// `3.1 s`.
    static func formatSeconds(_ nanoseconds: Int64) -> String {
        fixed(Double(nanoseconds) / 1e9, decimals: 1) + " s"
    }
}
