import HarnessModel

// Where a run's time went, in words: the line `--show-time` prints and the seconds the report's time
// section gives.

extension RunReport {
    /// `12 cases and 4 instrumented took 23.5 s: live-query 20.4 s (9 + 3 instrumented), calibration 3.1 s (3 + 1
    /// instrumented)`, slowest first; nil without case times.
    var timeSummary: String? {
        let times = scenarioTimes.sorted { $0.nanoseconds > $1.nanoseconds }
        guard !times.isEmpty else { return nil }
        let total = times.reduce(Int64(0)) { $0 + $1.nanoseconds }
        let cases = times.reduce(0) { $0 + $1.cases }
        let instrumented = times.reduce(0) { $0 + $1.instrumentedCases }
        let elapsed = elapsedNanoseconds.map { " in \(Units.formatSeconds($0)) of wall time" } ?? ""
        return "\(Self.casesCount(cases, instrumented: instrumented)) took \(Units.formatSeconds(total))\(elapsed): "
            + times.map { time in
                let count =
                    time.instrumentedCases > 0
                    ? "\(time.cases) + \(time.instrumentedCases) instrumented" : "\(time.cases)"
                return "\(time.scenario) \(Units.formatSeconds(time.nanoseconds)) (\(count))"
            }.joined(separator: ", ")
    }

    /// `12 cases`, `12 cases and 4 instrumented`: measured cases (repetitions), and the instrumented ones apart.
    public static func casesCount(_ cases: Int, instrumented: Int) -> String {
        "\(cases) case\(cases == 1 ? "" : "s")" + (instrumented > 0 ? " and \(instrumented) instrumented" : "")
    }
}

extension Units {
    /// `3.1 s`.
    static func formatSeconds(_ nanoseconds: Int64) -> String {
        fixed(Double(nanoseconds) / 1e9, decimals: 1) + " s"
    }
}
