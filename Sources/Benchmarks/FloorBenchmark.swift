import AllocatorProbe
import Foundation
import HarnessModel
import Reports
import Runner
import WorkloadKit

/// The measurement floor: tiny known allocations as the sampler and exact mode read them, with the truth
/// beside and the uncertainty each case states.
///
/// Each case is the calibration workload in its own child process, as in a real run: holds of 1 KiB,
/// 16 KiB and 256 KiB (`hold-large`: allocate, idle 100 ms, release) and the churn loop (`churn`, at most
/// 64 blocks of 16 B-4 KiB alive). The truth is the workload's own `heldBytes`: the usable (size-class)
/// bytes of what it holds at its top, summed from `malloc_usable_size` (for the holds, `nallocx` of the
/// size; for churn, the most that was alive at once, its ring of slots included). Both modes also count the
/// workload's case object and its list of blocks (128 B), which the truth leaves out.
enum FloorBenchmark {
    struct TruthCase {
        var name: String
        var spec: CaseSpec
    }

    /// One mode's readings of one case over the rounds.
    struct Readings {
        var truth: [Int] = []
        var net: [Int] = []
        var stated: [Int] = []
        var setup: [Int] = []
        var harness: [Int] = []
        var problems: [String] = []
    }

    static func cases(churnOperations: Int) -> [TruthCase] {
        let hold = [Bench.step("allocate"), Bench.idle(.milliseconds(100)), Bench.step("release")]
        let holds = [(1 << 10, "1 KiB"), (16 << 10, "16 KiB"), (256 << 10, "256 KiB")].map { size, label in
            TruthCase(
                name: "hold \(label)",
                spec: Bench.calibration(
                    "hold-large", ["holdSize": .bytes(size)], steps: hold, scenario: "floor-hold-\(size)"))
        }
        let churn = TruthCase(
            name: "churn (\(churnOperations) pairs)",
            spec: Bench.calibration(
                "churn", ["churnOperations": .count(churnOperations)],
                steps: [Bench.step("allocate"), Bench.step("release")], scenario: "floor-churn"))
        return holds + [churn]
    }

    static func run(_ environment: BenchEnvironment, rounds: Int, churnOperations: Int) -> String {
        var table: [(TruthCase, sampled: Readings, exact: Readings)] = []
        for truth in cases(churnOperations: churnOperations) {
            var sampled = Readings()
            var exact = Readings()
            for round in 0..<rounds {
                // Alternate which mode goes first, so neither always runs on a warmer machine.
                let modes: [Mode] = round % 2 == 0 ? [.sampled, .exact] : [.exact, .sampled]
                for mode in modes {
                    let result = environment.launcher(mode).run(environment.spec(truth.spec, for: mode))
                    if mode == .sampled {
                        record(result, exact: false, into: &sampled)
                    } else {
                        record(result, exact: true, into: &exact)
                    }
                }
            }
            table.append((truth, sampled, exact))
        }
        return render(table, rounds: rounds, churnOperations: churnOperations)
    }

    /// Adds one case's figures to `readings`; a case that did not complete, or lacks a figure, is a problem.
    static func record(_ result: CaseResult, exact: Bool, into readings: inout Readings) {
        guard let m = result.completed, let truth = m.metric("heldBytes")?.value, let floor = m.floor,
            let setup = m.phases.first(where: { $0.name == "setup" })
        else {
            readings.problems.append("\(result.status.rawValue) \(result.failureText ?? "(no floor)")")
            return
        }
        let net = exact ? m.exactPeakNetBytes : m.peakAllocatedNetBytes
        let stated = exact ? m.exactPeakUncertaintyBytes : m.peakUncertaintyBytes
        let setupNet = exact ? m.exactPeakNetBytes(of: setup) : setup.peakAllocatedBytes - m.baselineAllocatedBytes
        guard let net, let stated, let setupNet else {
            readings.problems.append("no exact figures")
            return
        }
        readings.truth.append(Int(truth))
        readings.net.append(net)
        readings.stated.append(stated)
        readings.setup.append(setupNet)
        readings.harness.append(floor.harnessAllocatedBytes)
    }

    /// `1.13 KiB`: the median of `values`; `–` when there are none.
    static func median(_ values: [Int]) -> String {
        Statistics.median(values.map(Double.init)).map { Units.formatBytes($0) } ?? "–"
    }

    /// `+128 B (+160 B)`: the median error against the truth and, in brackets, the one farthest from it.
    static func error(_ readings: Readings) -> String {
        let errors = zip(readings.net, readings.truth).map { $0 - $1 }
        guard let median = Statistics.median(errors.map(Double.init)),
            let worst = errors.max(by: { abs($0) < abs($1) })
        else { return "–" }
        func signed(_ value: Double) -> String { (value >= 0 ? "+" : "") + Units.formatBytes(value) }
        return "\(signed(median)) (\(signed(Double(worst))))"
    }

    static func render(
        _ table: [(TruthCase, sampled: Readings, exact: Readings)], rounds: Int, churnOperations: Int
    ) -> String {
        var out: [String] = []
        out.append("# Measurement floor: tiny known allocations")
        out.append("")
        out.append(contentsOf: header(rounds: rounds))
        out.append(
            "| Workload | Truth | Sampled (1 ms) | Sampled − truth (worst) | Stated ± | Exact | Exact − truth "
                + "(worst) | Stated ± | Setup phase, sampled / exact |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for (truth, sampled, exact) in table {
            out.append(
                "| \(truth.name) | \(median(sampled.truth + exact.truth)) | \(median(sampled.net)) | "
                    + "\(error(sampled)) | ≤ \(Units.formatBytes(sampled.stated.max() ?? 0)) | \(median(exact.net)) "
                    + "| \(error(exact)) | ≤ \(Units.formatBytes(exact.stated.max() ?? 0)) | "
                    + "\(Units.formatBytes(sampled.setup.max() ?? 0)) / \(Units.formatBytes(exact.setup.max() ?? 0)) |")
        }
        out.append("")
        out.append(contentsOf: notes(table))
        let problems = table.flatMap { row in
            (row.sampled.problems.map { "sampled \($0)" } + row.exact.problems.map { "exact \($0)" }).map {
                "\(row.0.name) \($0)"
            }
        }
        if !problems.isEmpty {
            out.append("Runs that did not complete: " + problems.map { "`\($0)`" }.joined(separator: "; ") + ".")
            out.append("")
        }
        return out.joined(separator: "\n")
    }

    /// How the table was made.
    static func header(rounds: Int) -> [String] {
        [
            "Each figure is a net peak (peak minus the case's baseline), the median of \(rounds) runs per mode, "
                + "each case in its own process, the modes alternating. **Truth** is the workload's `heldBytes`: "
                + "the size-class bytes of what it holds at its top (`malloc_usable_size`), without its own case "
                + "object and block list (128 B), which both modes count. **Sampled** is the live heap "
                + "(`stats.allocated` without thread caches) sampled every 1 ms and at phase boundaries; **exact** "
                + "counts every allocation (`--peak exact`). **Stated ±** is the largest uncertainty the cases "
                + "stated beside the figure (the report's ± and `peak_uncertainty_bytes`). **Setup phase** is the "
                + "largest net peak before the workload allocates anything but its case object: what the harness "
                + "itself adds.",
            "",
        ]
    }

    /// The bounds checked over every run: how many stayed inside them, computed here from the readings.
    static func notes(_ table: [(TruthCase, sampled: Readings, exact: Readings)]) -> [String] {
        let harness = table.flatMap { $0.sampled.harness + $0.exact.harness }.max() ?? 0
        // The workload's own case object and block list, which both modes count and the truth leaves out.
        let own = 128
        func within(_ readings: [Readings], _ bound: (Readings, Int) -> Int) -> String {
            let runs = readings.flatMap { r in r.net.indices.map { (r, $0) } }
            let inside = runs.filter { r, index in r.net[index] - r.truth[index] <= bound(r, index) }.count
            return "\(inside) of \(runs.count)"
        }
        let holds = table.filter { $0.0.spec.strategy == "hold-large" }
        return [
            "Bounds, over every run: sampled holds within truth + 8 KiB: "
                + within(holds.map(\.sampled)) { _, _ in 8 << 10 } + "; exact peaks within truth + 1 KiB: "
                + within(table.map(\.exact)) { _, _ in 1 << 10 } + "; sampled peaks within truth + \(own) B + their "
                + "stated ±: " + within(table.map(\.sampled)) { r, index in own + r.stated[index] } + ". The harness "
                + "allocated at most \(Units.formatBytes(harness)) after the baseline in any run "
                + "(`harness_allocated_bytes`). The churn loop's true maximum lasts an instant, so the sampler reads "
                + "below it; exact mode reads it.",
            "",
        ]
    }
}
