import HarnessModel

extension ReportBuilder {
    /// `## Environment`: the versions, the machine and the sampling; then where the run's time went.
    static func environment(_ report: RunReport, cases: [CaseResult]) -> Section {
        let environment = report.environment
        let settings = Phrase.joined(
            environment.jemallocSettings.sorted { $0.key < $1.key }.map { .code("\($0.key)=\($0.value)") },
            separator: " ")
        let sampling = cases.compactMap { $0.measurements?.sampling }
        let achieved = sampling.filter { $0.sampleCount > 1 }.map { Double($0.achievedIntervalNanoseconds) }
        // The cases' own (a server under load samples at 10 ms by default), else the run's.
        let asked = Set(sampling.map(\.requestedIntervalNanoseconds).filter { $0 > 0 }).sorted()
        let requested = asked.isEmpty ? [environment.requestedIntervalNanoseconds].filter { $0 > 0 } : asked
        var interval: Phrase =
            requested.isEmpty
            ? "off"
            : "requested " + Phrase.joined(requested.map { "\(Value.duration(nanoseconds: $0))" }, separator: ", ")
        if let median = Statistics.median(achieved), let worst = achieved.max() {
            interval.append(
                ", achieved \(Value.duration(nanoseconds: Int64(median))) median, "
                    + "\(Value.duration(nanoseconds: Int64(worst))) slowest case")
        }
        let samplerBytes = sampling.map(\.samplerAllocatedBytes).max() ?? 0
        let rows: [[Phrase]] = [
            ["memharness", Phrase(stringLiteral: environment.toolVersion)],
            ["jemalloc", Phrase(stringLiteral: environment.jemallocVersion)], ["jemalloc settings", settings],
            ["Swift", Phrase(stringLiteral: environment.swiftVersion)],
            ["OS", Phrase(stringLiteral: environment.operatingSystem)],
            ["Kernel", Phrase(stringLiteral: environment.kernel)],
            ["CPU", "\(environment.cpuModel) × \(environment.cpuCount)"],
            ["Memory", .value(.bytes(Double(environment.memoryBytes)))], ["Sampling interval", interval],
            ["Sampler's own allocations", "\(Value.bytes(Double(samplerBytes))) (largest over cases)"],
        ]
        var blocks: [Block] = [.table(Table(columns: [.init(""), .init("")], rows: rows))]
        if let time = timeTable(report) { blocks.append(.section(time)) }
        return Section(level: 2, heading: "Environment", blocks: blocks)
    }

    /// Where the run's time went: each scenario's cases' wall time, slowest first; nil for records without case
    /// times.
    static func timeTable(_ report: RunReport) -> Section? {
        let times = report.scenarioTimes.sorted { $0.nanoseconds > $1.nanoseconds }
        guard !times.isEmpty else { return nil }
        let total = max(times.reduce(Int64(0)) { $0 + $1.nanoseconds }, 1)
        var blocks: [Block] = []
        if let elapsed = report.elapsedNanoseconds {
            blocks.append(
                .paragraph(
                    "The cases ran in \(Value.seconds(nanoseconds: elapsed)) of wall time; their own times add up to "
                        + "\(Value.seconds(nanoseconds: total)) (cases of \(code: "parallel: true") scenarios run side "
                        + "by side with --jobs)."))
        }
        // Instrumented cases (allocation stacks, heap captures) are counted apart, in a column of their own.
        let anyInstrumented = times.contains { $0.instrumentedCases > 0 }
        var table = Table(
            columns: [.init("Scenario"), .init("Cases", .number)]
                + (anyInstrumented ? [.init("Instrumented", .number)] : [])
                + [.init("Case time", .number), .init("Share", .number)])
        for time in times {
            table.rows.append(
                [Phrase(stringLiteral: time.scenario), .value(.count(time.cases))]
                    + (anyInstrumented ? [.value(.count(time.instrumentedCases))] : []) + [
                        .value(.seconds(nanoseconds: time.nanoseconds)),
                        .value(.percent(Double(time.nanoseconds) / Double(total), decimals: 0)),
                    ])
        }
        blocks.append(.table(table))
        return Section(level: 3, heading: "Time per scenario", blocks: blocks)
    }
}
