import FileIO
import Foundation
import HarnessModel
import Reports
import Runner
import Verdicts

/// Do the gates hold still on unchanged code and catch a real regression?
///
/// One run of a small calibration scenario with `repetitions: auto` is saved as a baseline (`baseline save`:
/// each figure's tolerance derived from its noise). Then `runs` runs of the unchanged scenario and `runs` runs
/// with a real 5% regression (`--set objectCount=17203`: 5.0% more 1 KiB objects held by `hold-small-objects`)
/// alternate, each `memharness run --baseline FILE --floor 0` in its own process: the noise-aware gate alone,
/// no absolute floor to hide behind. Each run is also judged, in this process and on the same records, by two
/// other gates: the flat defaults for a baseline without noise (±10%, 256 KiB floor), and medians alone at
/// ±1% without a floor (the derived minimum without the intervals).
enum StabilityBenchmark {
    /// The scenario: a large block, many small objects (the regression's target) and a churn loop whose
    /// sampled peak is noisy: its 20,000 pairs last about a millisecond, so the 1 ms sampler lands inside the
    /// loop in some repetitions (~135 KiB of live heap) and between its phases in others (96 B).
    static let scenario = """
        scenario: stability
        description: Three calibration strategies for the gate stability benchmark.
        workload: calibration
        parameters:
          holdSize: 4MiB
          objectCount: 16384
          objectSize: 1KiB
          churnOperations: 20000
        strategies: [hold-large, hold-small-objects, churn]
        steps:
          - allocate
          - idle: 30ms
          - release
        repetitions: auto
        settle: 20ms

        """

    /// The injected regression: 5.0% more objects (16,384 → 17,203).
    static let regression = "objectCount=17203"
    /// The strategy the regression moves.
    static let regressed = "hold-small-objects"

    /// One run of the scenario and the verdicts of the three gates on it.
    struct Judged {
        var changed: Bool
        var exitStatus: Int32
        var seconds: Double
        var report: RunReport
        /// Strategies whose baseline check failed, per gate: noise-aware (the run's own checks), flat, medians alone.
        var failed: [[String]]
    }

    static let gates = [
        "noise-aware: the new median's 95% interval outside the baseline's derived tolerance, floor 0 "
            + "(`memharness run --baseline FILE --floor 0`, its exit status)",
        "flat: ±10% and a 256 KiB floor (the defaults for a baseline without noise)",
        "medians alone: ±1% (the derived minimum), no floor, no intervals",
    ]

    static func run(_ environment: BenchEnvironment, runs: Int) throws -> String {
        let directory = environment.scratch.appendingPathComponent("stability").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = "\(directory)/stability.yaml"
        try scenario.write(toFile: file, atomically: true, encoding: .utf8)
        let start = ContinuousClock.now
        let base = try memharness(environment, ["run", file, "--out", "\(directory)/base", "--quiet"])
        guard base.status == 0 else { throw BenchError(path: file, reason: "the baseline run exited \(base.status)") }
        let saved = try memharness(
            environment,
            ["baseline", "save", "--from", "\(directory)/base", "--output", "\(directory)/base.json"])
        guard saved.status == 0 else { throw BenchError(path: file, reason: "baseline save exited \(saved.status)") }
        let baseReport = try ReportFolder.read("\(directory)/base").report
        let baseline = try BaselineFile.read("\(directory)/base.json")
        var judged: [Judged] = []
        for index in 0..<(2 * runs) {
            // Alternate unchanged and regressed runs, so a drift of the machine hits both alike.
            let changed = index % 2 == 1
            judged.append(
                try judge(
                    environment, file: file, out: "\(directory)/run", changed: changed,
                    baseline: BaselineReference(baseline: baseline, file: "\(directory)/base.json")))
        }
        let elapsed = Double((ContinuousClock.now - start).nanoseconds) / 1e9
        return render(judged, base: baseReport, baseline: baseline, runs: runs, elapsedSeconds: elapsed)
    }

    /// One run, its exit status and the failures of each gate.
    static func judge(
        _ environment: BenchEnvironment, file: String, out: String, changed: Bool, baseline: BaselineReference
    ) throws -> Judged {
        let arguments =
            ["run", file, "--out", out, "--quiet", "--baseline", baseline.file, "--floor", "0"]
            + (changed ? ["--set", regression] : [])
        let outcome = try memharness(environment, arguments)
        let record = try ReportFolder.read(out)
        let noiseAware = record.checks.filter { $0.kind == .baseline && !$0.passed }.map(\.strategy)
        let flatBaseline = Baseline(name: "flat", cases: baseline.baseline.cases)
        let flat = BaselinePolicy(tolerance: 0.10, floorBytes: 256 * 1024)
            .compare(record.report, with: flatBaseline, baselineFile: "flat").filter { !$0.passed }.map(\.strategy)
        return Judged(
            changed: changed, exitStatus: outcome.status, seconds: outcome.seconds, report: record.report,
            failed: [noiseAware, flat, mediansAlone(record.report, baseline: baseline.baseline)])
    }

    /// Strategies whose median rose more than 1% above the baseline's, intervals and floor left out.
    static func mediansAlone(_ report: RunReport, baseline: Baseline) -> [String] {
        report.scenarios.flatMap { run in
            run.strategies.filter { strategy in
                guard let old = baseline.cases["\(run.name)/\(strategy)"]?["peakAllocated"],
                    let new = ThresholdEvaluator.median(
                        FigureReference(strategy: strategy, figure: .peakAllocated), in: run)?.median, old > 0
                else { return false }
                return (new - old) / old > 0.01
            }
        }
    }

    /// Runs `memharness` with `arguments` (stdout discarded, stderr shown); its exit status and wall time.
    static func memharness(_ environment: BenchEnvironment, _ arguments: [String]) throws -> (
        status: Int32, seconds: Double
    ) {
        // One run of the stability scenario takes about a minute: an hour means it is stuck.
        let ended = try BenchChild.run(environment.plainBinary, arguments, timeout: .seconds(3600))
        return (ended.termination.shellStatus, ended.seconds)
    }
}

extension StabilityBenchmark {
    static func render(_ judged: [Judged], base: RunReport, baseline: Baseline, runs: Int, elapsedSeconds: Double)
        -> String
    {
        let environment = base.environment
        let unchanged = judged.filter { !$0.changed }
        let changed = judged.filter(\.changed)
        var out = ["# Stability: gates on unchanged code and on a 5% regression", ""]
        out.append(
            "\(2 * runs + 1) runs of `memharness` \(environment.toolVersion) in "
                + "\(Units.fixed(elapsedSeconds, decimals: 0)) s, "
                + "\(Units.fixed(elapsedSeconds / Double(2 * runs + 1), decimals: 1)) s per run."
        )
        out.append("")
        out.append(
            "One run of the scenario below (`repetitions: auto`: each strategy until the 95% interval of its median "
                + "is within ±2%, 6 to 15 times) is saved with `memharness baseline save`, which derives each "
                + "figure's tolerance from its noise (2 × the reach of the median's 95% interval, at least 1%). "
                + "Then \(runs) runs of the unchanged scenario and \(runs) with a real regression, `--set "
                + "\(regression)` (5.0% more 1 KiB objects held by `\(regressed)`), alternate; each is `memharness "
                + "run --baseline FILE --floor 0`. A regression is caught when the gate fails `\(regressed)`. The "
                + "two other gates judge the same records."
        )
        out.append("")
        out.append(
            "| Gate | Unchanged runs that failed | 5% regressions caught | Regressed runs failing another strategy |")
        out.append("|---|---:|---:|---:|")
        for (index, gate) in gates.enumerated() {
            let falseFailures = unchanged.filter { !$0.failed[index].isEmpty }.count
            let caught = changed.filter { $0.failed[index].contains(regressed) }.count
            let collateral = changed.filter { $0.failed[index].contains { $0 != regressed } }.count
            out.append("| \(gate) | \(falseFailures)/\(runs) | \(caught)/\(runs) | \(collateral)/\(runs) |")
        }
        out.append("")
        out.append(
            "Exit statuses of the runs: unchanged \(statuses(unchanged)); regressed \(statuses(changed)) "
                + "(2: a finding; 1 would be a case that did not complete).")
        out.append("")
        out += strategyTable(judged, baseline: baseline)
        // One message per strategy the noise-aware gate failed, from the first run that failed it.
        var messages: [String: String] = [:]
        for run in judged {
            for check in failedChecks(run, baseline: baseline) where messages[check.strategy] == nil {
                messages[check.strategy] = check.message
            }
        }
        out.append("The noise-aware gate's message for each strategy it failed, from the first run that failed it:")
        out.append("")
        for (_, message) in messages.sorted(by: { $0.key < $1.key }) { out.append("- \(message)") }
        if messages.isEmpty { out.append("- none") }
        out.append("")
        out += Bench.scenarioBlock(scenario)
        return out.joined(separator: "\n")
    }

    /// Per strategy: the baseline, its noise and tolerance, and what the runs measured.
    static func strategyTable(_ judged: [Judged], baseline: Baseline) -> [String] {
        var out = [
            "| Strategy | Baseline median | Baseline noise → tolerance | Unchanged runs: medians | Regressed runs: "
                + "medians | Repetitions per run |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for strategy in ["hold-large", regressed, "churn"] {
            let key = "stability/\(strategy)"
            guard let old = baseline.cases[key]?["peakAllocated"] else { continue }
            let noise = baseline.derivedTolerance(key, .peakAllocated)
            let tolerance =
                noise.map {
                    "±\(Units.fixed($0.relativeNoise * 100, decimals: 1))% over \($0.repetitions) → "
                        + "±\(Units.fixed($0.tolerance * 100, decimals: 1))%"
                } ?? "–"
            func medians(_ runs: [Judged]) -> String {
                let values = runs.compactMap { run in
                    run.report.scenarios.first.flatMap {
                        ThresholdEvaluator.median(FigureReference(strategy: strategy, figure: .peakAllocated), in: $0)
                    }?.median
                }
                guard let low = values.min(), let high = values.max() else { return "–" }
                return "\(Units.formatBytes(low)) – \(Units.formatBytes(high)) "
                    + "(\(signed((low - old) / old)) … \(signed((high - old) / old)))"
            }
            let counts = judged.compactMap { $0.report.scenarios.first?.cases.filter { $0.strategy == strategy }.count }
            out.append(
                "| `\(strategy)` | \(Units.formatBytes(old)) | \(tolerance) | "
                    + "\(medians(judged.filter { !$0.changed })) | \(medians(judged.filter(\.changed))) | "
                    + "\(counts.min() ?? 0)–\(counts.max() ?? 0) |")
        }
        out.append("")
        return out
    }

    /// The noise-aware gate's failed checks of a run, evaluated again with the baseline file named `base.json`
    /// (the run's own checks name a scratch folder).
    static func failedChecks(_ run: Judged, baseline: Baseline) -> [CheckResult] {
        let checks = Gate.checks(
            for: run.report, baseline: BaselineReference(baseline: baseline, file: "base.json"),
            policy: GatePolicy(checkThresholds: false, baseline: BaselinePolicy(floorBytes: 0)))
        return CheckWording.results(checks.filter { !$0.passed })
    }

    /// `0 ×20`, `2 ×19, 0 ×1`.
    static func statuses(_ runs: [Judged]) -> String {
        let counts = Dictionary(grouping: runs, by: \.exitStatus).mapValues(\.count)
        return counts.sorted { $0.value > $1.value }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    }

    static func signed(_ fraction: Double) -> String {
        (fraction >= 0 ? "+" : "") + Units.fixed(fraction * 100, decimals: 1) + "%"
    }
}
