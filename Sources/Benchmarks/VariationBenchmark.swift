import FileIO
import Foundation
import HarnessModel
import Reports

/// How much each shipped scenario's main figure (net peak allocated per strategy) varies between
/// runs: `memharness run --repeat N` over every scenario file, then the coefficient of variation
/// (sample standard deviation over mean) of each strategy's completed cases, read from summary.csv.
/// A strategy its memory limit kills has no peak; its figure is the time of the kill.
enum VariationBenchmark {
    struct Row {
        var scenario: String
        var strategy: String
        var figure: String
        var values: [Double]
        var unit: String
    }

    static func run(_ environment: BenchEnvironment, repetitions: Int, scenariosDirectory: String) throws -> String {
        let out = environment.scratch.appendingPathComponent("variation").path
        // Every shipped scenario `repetitions` times: minutes; an hour per repetition means it is stuck.
        let ended = try BenchChild.run(
            environment.plainBinary,
            ["run", "--scenarios-dir", scenariosDirectory, "--repeat", String(repetitions), "--out", out, "--quiet"],
            timeout: .seconds(3600 * max(repetitions, 1)))
        let summary = try String(contentsOfFile: "\(out)/summary.csv", encoding: .utf8)
        let rows = rows(summary)
        return render(
            rows, repetitions: repetitions, exitStatus: ended.termination.shellStatus, elapsedSeconds: ended.seconds)
    }

    static func rows(_ summary: String) -> [Row] {
        let table = CSVTable.parse(summary)
        guard let header = table.first else { return [] }
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        guard let scenario = column("scenario"), let strategy = column("strategy"), let status = column("status"),
            let net = column("peak_allocated_net_bytes")
        else { return [] }
        let killedAt = column("killed_at_ms")
        let exact = column("exact_peak_net_bytes")
        // An instrumented case (a heap graph for `expect:`, stacks) records what inflates its figures: left out.
        let instrumentation = column("instrumentation")
        var rows: [Row] = []
        func add(_ scenario: String, _ strategy: String, _ figure: String, _ unit: String, _ value: Double?) {
            guard let value else { return }
            if let index = rows.firstIndex(where: {
                ($0.scenario, $0.strategy, $0.figure) == (scenario, strategy, figure)
            }) {
                rows[index].values.append(value)
            } else {
                rows.append(Row(scenario: scenario, strategy: strategy, figure: figure, values: [value], unit: unit))
            }
        }
        for line in table.dropFirst() where line.count == header.count && instrumentation.map({ line[$0] }) ?? "" == ""
        {
            if line[status] == "killed-by-memory-limit" {
                add(line[scenario], line[strategy], "killed at", "ms", killedAt.flatMap { Double(line[$0]) })
            } else if line[status] == "ok" {
                add(line[scenario], line[strategy], "peak allocated", "bytes", Double(line[net]))
                // Scenarios run with `peak: exact` also have the exact peak.
                add(line[scenario], line[strategy], "exact peak", "bytes", exact.flatMap { Double(line[$0]) })
            }
        }
        return rows
    }

    /// Sample standard deviation over mean, percent; nil with fewer than two values or a zero mean.
    static func coefficientOfVariation(_ values: [Double]) -> Double? {
        guard values.count >= 2 else { return nil }
        let mean = values.reduce(0, +) / Double(values.count)
        guard mean != 0 else { return nil }
        let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count - 1)
        return variance.squareRoot() / abs(mean) * 100
    }

    static func render(_ rows: [Row], repetitions: Int, exitStatus: Int32, elapsedSeconds: Double) -> String {
        var out: [String] = []
        out.append("# Variation: the main figure over \(repetitions) runs")
        out.append("")
        out.append(
            "`memharness run --repeat \(repetitions)` over every shipped scenario (sampled at 1 ms, each case in "
                + "its own process; \(Units.fixed(elapsedSeconds, decimals: 0)) s, exit status \(exitStatus)). CV "
                + "is the sample standard deviation over the mean. The figure is the net peak allocated of each "
                + "strategy's completed cases (and the exact peak, for a scenario run with `peak: exact`), or, for "
                + "a strategy its memory limit kills, the time of the kill.")
        out.append("")
        out.append("| Scenario | Strategy | Figure | Runs | Mean | Min – max | CV |")
        out.append("|---|---|---|---:|---:|---:|---:|")
        func format(_ value: Double, _ unit: String) -> String {
            unit == "bytes" ? Units.formatBytes(value) : Units.fixed(value, decimals: 0) + " ms"
        }
        for row in rows {
            let mean = row.values.reduce(0, +) / Double(row.values.count)
            let cv = coefficientOfVariation(row.values).map { Units.fixed($0, decimals: 2) + "%" } ?? "–"
            out.append(
                "| \(row.scenario) | `\(row.strategy)` | \(row.figure) | \(row.values.count) | "
                    + "\(format(mean, row.unit)) | \(format(row.values.min() ?? 0, row.unit)) – "
                    + "\(format(row.values.max() ?? 0, row.unit)) | \(cv) |"
            )
        }
        out.append("")
        return out.joined(separator: "\n")
    }
}
