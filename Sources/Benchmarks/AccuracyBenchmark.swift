import AllocatorProbe
import Foundation
import HarnessModel
import Measurement
import Reports
import Runner
import Scenarios
import WorkloadKit

/// Peaks of workloads with a known truth, as the sampler, exact mode, massif and heaptrack see them.
///
/// The truth is computed here from the workload's parameters, in both currencies: the bytes the
/// program requested (what massif and heaptrack count) and the size-class bytes jemalloc hands out
/// for them (`nallocx`; what `stats.allocated` and exact mode count).
enum AccuracyBenchmark {
    /// The module whose frames mark the workload's own allocations in the tools' call stacks.
    static let workloadMarker = "CalibrationWorkload"

    struct TruthCase {
        var name: String
        var description: String
        var spec: CaseSpec
        var requestedBytes: Int
        var sizeClassBytes: Int
        /// Phases holding one spike each, for counting the spikes a mode caught.
        var spikePhases: [String] = []
    }

    struct Outcome {
        var truth: TruthCase
        var sampled: [CaseResult] = []
        var exact: [CaseResult] = []
        var massif: ToolOutputs.Peak?
        var heaptrack: ToolOutputs.Peak?
        var problems: [String] = []
    }

    static func cases() -> [TruthCase] {
        let holdSize = 40_000_000
        let spikeSize = 16 << 20
        let spikes = 200
        let objectSize = 4000
        let depth = 4096
        let slots = depth * MemoryLayout<UnsafeMutableRawPointer?>.stride
        let spikePhases = ["spike"] + (2...spikes).map { "spike#\($0)" }
        return [
            TruthCase(
                name: "hold", description: "`hold-large`: one block of \(holdSize) B, written, held 100 ms",
                spec: Bench.calibration(
                    "hold-large", ["holdSize": .bytes(holdSize)],
                    steps: [Bench.step("allocate"), Bench.idle(.milliseconds(100)), Bench.step("release")],
                    scenario: "accuracy-hold"),
                requestedBytes: holdSize, sizeClassBytes: AllocatorCost.bytes(forRequest: holdSize)),
            TruthCase(
                name: "200 spikes",
                description:
                    "`spikes`: \(spikes) blocks of \(Units.formatBytes(spikeSize)), each alive a few µs, 2 ms "
                    + "apart, one step (phase) each",
                spec: Bench.calibration(
                    "spikes", ["spikeSize": .bytes(spikeSize), "spikeGap": .duration(nanoseconds: 2_000_000)],
                    steps: spikePhases.map { Bench.step("spike", phase: $0) }, scenario: "accuracy-spikes"),
                requestedBytes: spikeSize, sizeClassBytes: AllocatorCost.bytes(forRequest: spikeSize),
                spikePhases: spikePhases),
            TruthCase(
                name: "cross-thread",
                description:
                    "`cross-thread`: a queue of \(depth) blocks of \(objectSize) B filled by one thread, freed by "
                    + "another (20,000 blocks)",
                spec: Bench.calibration(
                    "cross-thread",
                    [
                        "objectSize": .bytes(objectSize), "crossThreadDepth": .count(depth),
                        "crossThreadItems": .count(20_000),
                    ],
                    steps: [Bench.step("allocate"), Bench.step("release")], scenario: "accuracy-cross-thread"),
                requestedBytes: depth * objectSize + slots,
                sizeClassBytes: depth * AllocatorCost.bytes(forRequest: objectSize)
                    + AllocatorCost.bytes(forRequest: slots)),
        ]
    }

    static func run(_ environment: BenchEnvironment, rounds: Int, tools: Bool) -> String {
        var outcomes: [Outcome] = []
        for truth in cases() {
            var outcome = Outcome(truth: truth)
            for _ in 0..<rounds {
                for mode in [Mode.sampled, .exact] {
                    let result = environment.launcher(mode).run(environment.spec(truth.spec, for: mode))
                    guard result.status == .ok else {
                        outcome.problems.append("\(mode.label): \(result.status.rawValue) \(result.failureText ?? "")")
                        continue
                    }
                    if mode == .sampled { outcome.sampled.append(result) } else { outcome.exact.append(result) }
                }
            }
            if tools {
                let massifFile = environment.scratch.appendingPathComponent("accuracy-\(truth.spec.scenario).massif")
                    .path
                let massifRun = environment.launcher(.massif, output: massifFile).run(
                    environment.spec(truth.spec, for: .massif))
                // An unreadable massif.out is reported below as a problem of the run, like a missing one.
                if massifRun.status == .ok, let text = try? String(contentsOfFile: massifFile, encoding: .utf8) {
                    outcome.massif = ToolOutputs.massifPeak(text, marker: workloadMarker)
                } else {
                    outcome.problems.append(
                        "massif: \(massifRun.status.rawValue) \(massifRun.failureText ?? "no massif.out")")
                }
                let stem = environment.scratch.appendingPathComponent("accuracy-\(truth.spec.scenario).heaptrack").path
                let heaptrackRun = environment.launcher(.heaptrack, output: stem).run(
                    environment.spec(truth.spec, for: .heaptrack))
                // heaptrack_print failing is reported below as a problem of the run, like a missing recording.
                if heaptrackRun.status == .ok, let recording = ToolOutputs.heaptrackRecording(stem: stem),
                    let stacks = try? ToolOutputs.heaptrackStacks(recording: recording, scratch: environment.scratch),
                    !stacks.isEmpty
                {
                    outcome.heaptrack = ToolOutputs.heaptrackPeak(foldedStacks: stacks, marker: workloadMarker)
                } else {
                    outcome.problems.append(
                        "heaptrack: \(heaptrackRun.status.rawValue) \(heaptrackRun.failureText ?? "no recording")")
                }
            }
            outcomes.append(outcome)
        }
        return render(outcomes, rounds: rounds)
    }

    /// `16.00 MiB (+0.01%)`: a figure and its error against `truth`.
    static func cell(_ bytes: Double?, truth: Int) -> String {
        guard let bytes else { return "–" }
        let error = (bytes - Double(truth)) / Double(truth) * 100
        return "\(Units.formatBytes(bytes)) (\(error >= 0 ? "+" : "")\(Units.fixed(error, decimals: 2))%)"
    }

    static func caught(_ results: [CaseResult], _ truth: TruthCase, exact: Bool) -> [Int] {
        results.map { result in
            truth.spikePhases.filter { name in
                guard let m = result.completed, let phase = m.phases.first(where: { $0.name == name }) else {
                    return false
                }
                let net =
                    exact ? m.exactPeakNetBytes(of: phase) ?? 0 : phase.peakAllocatedBytes - m.baselineAllocatedBytes
                return Double(net) >= 0.995 * Double(truth.sizeClassBytes)
            }.count
        }
    }

    static func render(_ outcomes: [Outcome], rounds: Int) -> String {
        var out: [String] = []
        out.append("# Accuracy: peaks of known workloads")
        out.append("")
        out.append(
            "Truths are computed from the workloads' parameters: **requested** bytes, and the **size-class** bytes "
                + "jemalloc hands out for them (`nallocx`). Sampled (`memharness`, 1 ms) and exact (the preloaded "
                + "agent's count, `--peak exact`) figures are net peaks (peak minus the case's baseline), medians of "
                + "\(rounds) runs, compared with the size-class truth. massif (`--peak-inaccuracy=0`) and heaptrack "
                + "figures are the bytes held at the process's heap peak under call stacks through the workload's code "
                + "(module `\(workloadMarker)`), one run each, compared with the requested truth."
        )
        out.append("")
        out.append(contentsOf: truthTable(outcomes))
        out.append(contentsOf: spikesCaught(outcomes))
        out.append("Workloads:")
        out.append("")
        for outcome in outcomes {
            out.append("- \(outcome.truth.name): \(outcome.truth.description).")
        }
        out.append("")
        out.append(contentsOf: wholeProcessTable(outcomes))
        let problems = outcomes.flatMap { outcome in outcome.problems.map { "\(outcome.truth.name) \($0)" } }
        if !problems.isEmpty {
            out.append("Runs that did not complete: " + problems.map { "`\($0)`" }.joined(separator: "; ") + ".")
            out.append("")
        }
        return out.joined(separator: "\n")
    }

    /// Each workload's truths beside what each tool measured.
    static func truthTable(_ outcomes: [Outcome]) -> [String] {
        var out = [
            "| Workload | Truth: requested | Truth: size classes | Sampled (1 ms) | Exact | massif | heaptrack |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for outcome in outcomes {
            let truth = outcome.truth
            let sampled = Statistics.median(
                outcome.sampled.compactMap { $0.completed.map { Double($0.peakAllocatedNetBytes) } })
            let exact = Statistics.median(outcome.exact.compactMap { $0.completed?.exactPeakNetBytes }.map(Double.init))
            out.append(
                "| \(truth.name) | \(Units.formatBytes(truth.requestedBytes)) | "
                    + "\(Units.formatBytes(truth.sizeClassBytes)) | \(cell(sampled, truth: truth.sizeClassBytes)) | "
                    + "\(cell(exact, truth: truth.sizeClassBytes)) | "
                    + "\(cell(outcome.massif.map { Double($0.markedBytes) }, truth: truth.requestedBytes)) | "
                    + "\(cell(outcome.heaptrack.map { Double($0.markedBytes) }, truth: truth.requestedBytes)) |")
        }
        out.append("")
        return out
    }

    /// Per workload with spikes: how many of its spikes each run caught, sampled and exact.
    static func spikesCaught(_ outcomes: [Outcome]) -> [String] {
        var out: [String] = []
        for outcome in outcomes where !outcome.truth.spikePhases.isEmpty {
            let total = outcome.truth.spikePhases.count
            let sampled = caught(outcome.sampled, outcome.truth, exact: false).map { "\($0)/\(total)" }.joined(
                separator: ", ")
            let exact = caught(outcome.exact, outcome.truth, exact: true).map { "\($0)/\(total)" }.joined(
                separator: ", ")
            out.append(
                "**Spikes caught** (a phase whose peak is within 0.5% of the spike): sampled \(sampled); "
                    + "exact \(exact) (per run).")
            out.append("")
        }
        return out
    }

    /// The whole process's heap at its peak, as massif and heaptrack saw it.
    static func wholeProcessTable(_ outcomes: [Outcome]) -> [String] {
        var out = [
            "At the peak, as the tools saw the whole process (harness included):", "",
            "| Workload | massif useful heap | massif extra heap | heaptrack heap |", "|---|---:|---:|---:|",
        ]
        for outcome in outcomes {
            out.append(
                "| \(outcome.truth.name) | \(outcome.massif.map { Units.formatBytes($0.totalBytes) } ?? "–") | "
                    + "\(outcome.massif.map { Units.formatBytes($0.extraBytes) } ?? "–") | "
                    + "\(outcome.heaptrack.map { Units.formatBytes($0.totalBytes) } ?? "–") |")
        }
        out.append("")
        return out
    }
}
