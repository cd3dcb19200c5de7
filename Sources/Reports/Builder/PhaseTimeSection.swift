import HarnessModel

/// How long each phase took per strategy: the median over the cases that completed. A step that waits on the
/// work (a drain, a compaction) shows here what the memory figures cost in time.
enum PhaseTimeSection {
    /// The section; nil when no completed case recorded phases.
    static func section(for scenario: ScenarioRun) -> Section? {
        let completed = scenario.cases.filter { $0.status == .ok }
        // Every case's phases, in the order they first appear (each server strategy has its own steps).
        let phases = completed.flatMap { $0.measurements?.phases.map(\.name) ?? [] }.uniqued()
        guard !phases.isEmpty else { return nil }
        var table = Table(columns: [.init("Strategy")] + phases.map { .init(.code($0), .number) })
        for strategy in scenario.strategies {
            let cases = completed.filter { $0.strategy == strategy }.compactMap(\.measurements)
            guard !cases.isEmpty else { continue }
            let cells = phases.map { phase -> Phrase in
                let durations = cases.compactMap { measurements in
                    measurements.phases.first { $0.name == phase }.map {
                        Double($0.endNanoseconds - $0.startNanoseconds)
                    }
                }
                return Statistics.median(durations).map { .value(.duration(nanoseconds: Int64($0.rounded()))) } ?? "–"
            }
            table.rows.append([.code(strategy)] + cells)
        }
        return Section(level: 3, heading: "Time per phase (median)", blocks: [.table(table)])
    }
}
