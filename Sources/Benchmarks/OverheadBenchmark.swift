import BuiltInWorkloads
import Foundation
import HarnessModel
import Measurement
import Reports
import Runner
import Scenarios
import WorkloadKit

/// What each way of measuring costs, side by side in one run: the allocation-heavy calibration
/// `churn` and the live-query workload, uninstrumented, sampled at 1 ms, exact, under massif and
/// under heaptrack. Times are the case's own (setup to teardown, measured inside the child);
/// tools get fewer operations and rounds, and their ratios are to uninstrumented runs of the same size.
enum OverheadBenchmark {
    struct Row {
        var workload: String
        var mode: Mode
        var runs: [TimedRun]
        var reference: [TimedRun]
    }

    static func run(
        _ environment: BenchEnvironment, rounds: Int, toolRounds: Int, tools: Bool, scenariosDirectory: String
    ) throws -> String {
        let churnLarge = 20_000_000
        let churnSmall = 1_000_000
        func churn(_ operations: Int) -> CaseSpec { Bench.churn(operations, scenario: "overhead-churn") }
        let liveQuery = try liveQuerySpec(scenariosDirectory)
        var rows: [Row] = []
        var problems: [String] = []

        func measure(_ spec: CaseSpec, modes: [Mode], rounds: Int) -> [Mode: [TimedRun]] {
            var runs: [Mode: [TimedRun]] = [:]
            for round in 0..<rounds {
                // Rotate the order so no mode always runs first on a cold (or warm) machine.
                let order = modes.indices.map { modes[($0 + round) % modes.count] }
                for mode in order {
                    let output = environment.scratch.appendingPathComponent("overhead-\(mode.rawValue)-\(round)").path
                    let run = Bench.timed(environment.launcher(mode, output: output), environment.spec(spec, for: mode))
                    if run.result.status == .ok {
                        runs[mode, default: []].append(run)
                    } else {
                        problems.append(
                            "\(spec.scenario) \(mode.label): \(run.result.status.rawValue) \(run.result.failureText ?? "")"
                        )
                    }
                }
            }
            return runs
        }

        let native: [Mode] = [.uninstrumented, .sampled, .exact]
        // Warm-up, not counted: the first children pay for cold caches and page faults.
        _ = measure(churn(churnLarge / 10), modes: native, rounds: 1)
        let large = measure(churn(churnLarge), modes: native, rounds: rounds)
        for mode in native {
            rows.append(
                Row(
                    workload: "churn, \(churnLarge / 1_000_000) M pairs", mode: mode, runs: large[mode] ?? [],
                    reference: large[.uninstrumented] ?? []))
        }
        let small = measure(churn(churnSmall), modes: [.uninstrumented], rounds: rounds)
        let toolModes: [Mode] = tools ? [.massif, .heaptrack] : []
        let smallTools = measure(churn(churnSmall), modes: toolModes, rounds: toolRounds)
        for mode in [Mode.uninstrumented] + toolModes {
            rows.append(
                Row(
                    workload: "churn, \(churnSmall / 1_000_000) M pairs", mode: mode,
                    runs: (mode == .uninstrumented ? small[mode] : smallTools[mode]) ?? [],
                    reference: small[.uninstrumented] ?? []))
        }
        let live = measure(liveQuery, modes: native, rounds: max(1, rounds / 2))
        let liveTools = measure(liveQuery, modes: toolModes, rounds: toolRounds)
        for mode in native + toolModes {
            rows.append(
                Row(
                    workload: "live-query", mode: mode, runs: (mode.usesTool ? liveTools[mode] : live[mode]) ?? [],
                    reference: live[.uninstrumented] ?? []))
        }
        return render(rows, problems: problems, liveQuery: liveQuery)
    }

    /// The shipped live-query scenario's `unbounded-dispatch` case with a 1 s burst (its allocation-heaviest strategy).
    static func liveQuerySpec(_ directory: String) throws -> CaseSpec {
        let file = "\(directory)/live-query.yaml"
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let scenario = try ScenarioParser(catalog: BuiltInWorkloads.catalog).parse(text, file: file)
        // The shipped scenario's device limit would kill the unbounded strategy; here it must run to the end,
        // at the size the earlier overhead tables were measured at.
        let overrides = ["burst.duration=1s", "payloadSize=2KiB", "writeRate=200/s"]
        let shortened = try applyOverrides(overrides, to: [scenario], catalog: BuiltInWorkloads.catalog)
        var options = RunOptions(repetitions: 1)
        options.memory = MemoryOptions(limit: .off, warning: .off)
        guard
            let spec = shortened.flatMap({ RunPlanner.cases(of: $0, options: options) })
                .first(where: { $0.strategy == "unbounded-dispatch" })
        else {
            throw BenchError(path: file, reason: "no unbounded-dispatch strategy")
        }
        var renamed = spec
        renamed.scenario = "overhead-live-query"
        return renamed
    }

    /// The work a case did, from its metrics: callbacks and writes for live-query, pairs for churn (medians).
    static func work(_ runs: [TimedRun]) -> String {
        func median(_ name: String) -> Double? { Statistics.median(runs.compactMap { $0.result.metric(name)?.value }) }
        if let callbacks = median("callbacksDelivered"), let writes = median("writesApplied") {
            return "\(Units.fixed(callbacks, decimals: 0)) callbacks, \(Units.fixed(writes, decimals: 0)) writes"
        }
        return median("operations").map { Units.fixed($0, decimals: 0) + " pairs" } ?? "–"
    }

    static func render(_ rows: [Row], problems: [String], liveQuery: CaseSpec) -> String {
        var out = method(liveQuery: liveQuery)
        out.append(contentsOf: table(rows))
        let churn = rows.filter { $0.workload.hasPrefix("churn, 20") }
        func wallRatio(_ mode: Mode) -> String {
            guard let row = churn.first(where: { $0.mode == mode }), !row.runs.isEmpty else { return "–" }
            return Bench.ratio(median(row.runs, \.caseWallSeconds), median(row.reference, \.caseWallSeconds))
        }
        out.append(
            "**Allocation-heavy wall-time ratios:** sampled \(wallRatio(.sampled)) (target at most 1.02x), "
                + "exact \(wallRatio(.exact)) (target at most 1.5x).")
        out.append("")
        if !problems.isEmpty {
            out.append("Runs that did not complete: " + problems.map { "`\($0)`" }.joined(separator: "; ") + ".")
            out.append("")
        }
        return out.joined(separator: "\n")
    }

    static func median(_ runs: [TimedRun], _ figure: (TimedRun) -> Double) -> Double {
        Statistics.median(runs.map(figure)) ?? 0
    }

    /// The heading and how the cases were run and timed.
    static func method(liveQuery: CaseSpec) -> [String] {
        var out: [String] = []
        out.append("# Overhead: uninstrumented, sampled, exact, massif, heaptrack")
        out.append("")
        out.append(
            "Each case runs in its own child process, the modes alternating round by round. **Case wall** and "
                + "**case CPU** are measured inside the child from the start of setup to the end of teardown (CPU: "
                + "every thread of the process, the sampler's included); ratios are to the uninstrumented runs of "
                + "the same size (medians). **Process** columns time the whole child from spawn to exit, start-up "
                + "and the tool's own processes included (heaptrack records in a second process, "
                + "`heaptrack_interpret`, whose CPU shows only there).")
        out.append("")
        out.append(
            "- `churn`: calibration, malloc/free pairs of 16 B–4 KiB with 64 alive, one thread. The tools get 1 M "
                + "pairs instead of 20 M so they finish in seconds.")
        out.append(
            "- `live-query`: Scenarios/live-query.yaml, `unbounded-dispatch`, burst shortened to 1 s "
                + "(\(liveQuery.steps.map(\.phase).joined(separator: " → "))). It is paced (writes at a rate, a "
                + "consumer sleeping per callback), so its wall time hardly moves with the instrumentation; its CPU "
                + "time does. A slower writer lets the store coalesce changes into fewer callbacks, so the work "
                + "done (shown) shrinks under a heavy tool.")
        out.append(
            "- massif: `valgrind --tool=massif --peak-inaccuracy=0 --soname-synonyms=somalloc=*jemalloc*` on "
                + "`memharness _run-case --no-allocator-check` (massif replaces jemalloc). heaptrack: `heaptrack` "
                + "on `memharness _run-case`.")
        out.append("")
        return out
    }

    /// One row per workload and mode: work done, case and process times, ratios to the uninstrumented runs.
    static func table(_ rows: [Row]) -> [String] {
        var out: [String] = []
        out.append("| Workload | Mode | Work done | Case wall | × | Case CPU | × | Process wall | Process CPU | Runs |")
        out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in rows {
            guard !row.runs.isEmpty else {
                out.append("| \(row.workload) | \(row.mode.label) | – | – | – | – | – | – | – | 0 |")
                continue
            }
            let wall = median(row.runs, \.caseWallSeconds)
            let cpu = median(row.runs, \.caseCPUSeconds)
            let referenceWall = median(row.reference, \.caseWallSeconds)
            let referenceCPU = median(row.reference, \.caseCPUSeconds)
            out.append(
                "| \(row.workload) | \(row.mode.label) | \(work(row.runs)) | \(Bench.seconds(wall)) | "
                    + "\(Bench.ratio(wall, referenceWall)) | \(Bench.seconds(cpu)) | "
                    + "\(Bench.ratio(cpu, referenceCPU)) | "
                    + "\(Bench.seconds(median(row.runs) { Double($0.processWallNanoseconds) / 1e9 })) | "
                    + "\(Bench.seconds(median(row.runs) { Double($0.processCPUNanoseconds) / 1e9 })) | "
                    + "\(row.runs.count) |"
            )
        }
        out.append("")
        return out
    }
}
