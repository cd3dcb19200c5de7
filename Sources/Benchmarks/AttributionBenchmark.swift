import AllocatorProbe
import Foundation
import HarnessModel
import Measurement
import Reports
import Runner
import WorkloadKit

/// What recording allocation stacks costs, side by side in one run, next to the tools that also collect
/// stacks (heaptrack, massif), on the workloads of the overhead benchmark; and how close the top sites
/// come to the truth at each mean sampling interval, which is how the default interval is chosen.
///
/// An attributed case runs as `memharness run --attribute` runs it: the agent preloaded with stacks
/// sampled by bytes, the sampler at 1 ms driving the peak snapshot. Its cost is the case's own time (setup
/// to teardown, inside the child); symbolizing the record afterwards is in the process columns only.
enum AttributionBenchmark {
    /// The mean sampling intervals compared, the default among them. (16 KiB cost 1.6-2.3x on the churn in
    /// earlier runs of this benchmark: past the target, so it is left out.)
    static let means = Set([64 << 10, 128 << 10, 256 << 10, AttributionRequest.defaultSampleMeanBytes]).sorted()
    /// The target for the churn benchmark: attribution at most this many times the uninstrumented wall time.
    static let target = 1.5

    /// One way of running a case.
    struct Configuration: Hashable {
        var mode: Mode
        /// Attribution on, with this mean interval; nil: off.
        var stackMean: Int?
        /// `--peak exact` as well.
        var exact = false

        var label: String {
            guard let stackMean else { return mode.label }
            return "attribution, \(Units.formatBytes(stackMean)) mean" + (exact ? " + exact" : "")
        }
    }

    static let uninstrumented = Configuration(mode: .uninstrumented)
    static let sampled = Configuration(mode: .sampled)
    static var attributed: [Configuration] { means.map { Configuration(mode: .sampled, stackMean: $0) } }
    static let attributedExact = Configuration(
        mode: .sampled, stackMean: AttributionRequest.defaultSampleMeanBytes, exact: true)

    struct Row {
        var workload: String
        var configuration: Configuration
        var runs: [TimedRun]
        var reference: [TimedRun]
        /// Case wall time over the uninstrumented run's of the same round (the two ran one after the other),
        /// one ratio per round with both: on a machine whose speed drifts, the pairs drift together.
        var pairedWallRatios: [Double] = []
    }

    /// Runs by configuration, each with the round it ran in.
    typealias Measured = [Configuration: [(round: Int, run: TimedRun)]]

    /// A workload with a known truth at one site.
    struct Truth {
        var name: String
        var spec: CaseSpec
        var bytes: Int
    }

    /// Runs of one configuration, by configuration; failures go to `problems`.
    final class Measurer {
        let environment: BenchEnvironment
        var problems: [String] = []
        private var count = 0

        init(_ environment: BenchEnvironment) { self.environment = environment }

        func run(_ spec: CaseSpec, _ configuration: Configuration) -> TimedRun? {
            var caseSpec = environment.spec(spec, for: configuration.mode)
            if let mean = configuration.stackMean { caseSpec.attribution = AttributionRequest(sampleMeanBytes: mean) }
            if configuration.exact { caseSpec.peakMode = .exact }
            count += 1
            let output = environment.scratch.appendingPathComponent("attribution-\(count)").path
            let run = Bench.timed(environment.launcher(configuration.mode, output: output), caseSpec)
            guard run.result.status == .ok, configuration.stackMean == nil || run.result.measurements?.profile != nil
            else {
                problems.append(
                    "\(spec.scenario) \(configuration.label): \(run.result.status.rawValue) \(run.result.failureText ?? "")"
                )
                return nil
            }
            return run
        }

        /// `rounds` runs of every configuration, their order rotating from round to round.
        func measure(_ spec: CaseSpec, _ configurations: [Configuration], rounds: Int) -> Measured {
            var runs: Measured = [:]
            for round in 0..<rounds {
                for index in configurations.indices {
                    let configuration = configurations[(index + round) % configurations.count]
                    if let run = run(spec, configuration) { runs[configuration, default: []].append((round, run)) }
                }
            }
            return runs
        }
    }

    static func run(
        _ environment: BenchEnvironment, rounds: Int, toolRounds: Int, accuracyRounds: Int, tools: Bool,
        scenariosDirectory: String
    ) throws -> String {
        let measurer = Measurer(environment)
        let native = [uninstrumented, sampled] + attributed + [attributedExact]
        let churnLarge = 20_000_000
        let churnSmall = 1_000_000
        func churn(_ operations: Int) -> CaseSpec { Bench.churn(operations, scenario: "attribution-churn") }
        var rows: [Row] = []
        func add(_ workload: String, _ configurations: [Configuration], _ runs: Measured) {
            let reference = Dictionary((runs[uninstrumented] ?? []).map { ($0.round, $0.run) }) { first, _ in first }
            for configuration in configurations {
                let own = runs[configuration] ?? []
                let paired = own.compactMap { round, run -> Double? in
                    guard let base = reference[round], base.caseWallSeconds > 0 else { return nil }
                    return run.caseWallSeconds / base.caseWallSeconds
                }
                rows.append(
                    Row(
                        workload: workload, configuration: configuration, runs: own.map(\.run),
                        reference: runs[uninstrumented]?.map(\.run) ?? [], pairedWallRatios: paired))
            }
        }
        // Warm-up, not counted: the first children pay for cold caches and page faults.
        _ = measurer.measure(churn(churnLarge / 10), native, rounds: 1)
        add("churn, 20 M pairs", native, measurer.measure(churn(churnLarge), native, rounds: rounds))
        let toolModes = tools ? [Configuration(mode: .massif), Configuration(mode: .heaptrack)] : []
        let small = [
            uninstrumented, Configuration(mode: .sampled, stackMean: AttributionRequest.defaultSampleMeanBytes),
        ]
        var smallRuns = measurer.measure(churn(churnSmall), small, rounds: rounds)
        // The tools' runs pair with no uninstrumented run: their rounds are numbered after these.
        smallRuns.merge(measurer.measure(churn(churnSmall), toolModes, rounds: toolRounds).mapValues(renumbered)) {
            $0 + $1
        }
        add("churn, 1 M pairs", small + toolModes, smallRuns)
        let liveQuery = try OverheadBenchmark.liveQuerySpec(scenariosDirectory)
        var liveRuns = measurer.measure(liveQuery, native, rounds: max(1, rounds / 2))
        liveRuns.merge(measurer.measure(liveQuery, toolModes, rounds: toolRounds).mapValues(renumbered)) { $0 + $1 }
        add("live-query", native + toolModes, liveRuns)

        let accuracy = truths().map { truth in
            (truth, measurer.measure(truth.spec, attributed, rounds: accuracyRounds).mapValues { $0.map(\.run) })
        }
        return render(
            rows, accuracy: accuracy, problems: measurer.problems, liveQuery: liveQuery)
    }

    /// Runs numbered after every round of the configurations they are merged with.
    static func renumbered(_ runs: [(round: Int, run: TimedRun)]) -> [(round: Int, run: TimedRun)] {
        runs.map { (Int.max / 2 + $0.round, $0.run) }
    }

    /// Known holds at one site (`CalibrationCase.hold(_:)`): blocks far smaller than every mean, blocks
    /// about the size of the means, and one block far larger. The truth is the blocks' size-class bytes.
    static func truths() -> [Truth] {
        let holds: [(strategy: String, count: Int, size: Int)] = [
            ("hold-small-objects", 16_384, 1 << 10), ("hold-small-objects", 1_024, 16 << 10),
            ("hold-large", 1, 64 << 20),
        ]
        return holds.map { hold in
            let steps = [Bench.step("allocate"), Bench.idle(.milliseconds(50)), Bench.step("release")]
            let parameters: [String: ParameterValue] =
                hold.strategy == "hold-large"
                ? ["holdSize": .bytes(hold.size)]
                : ["objectCount": .count(hold.count), "objectSize": .bytes(hold.size)]
            return Truth(
                name: hold.count == 1
                    ? "1 block of \(Units.formatBytes(hold.size))"
                    : "\(hold.count) blocks of \(Units.formatBytes(hold.size))",
                spec: Bench.calibration(hold.strategy, parameters, steps: steps, scenario: "attribution-accuracy"),
                bytes: hold.count * AllocatorCost.bytes(forRequest: hold.size))
        }
    }

    /// The bytes a profile puts at the truth's site, relative error to the truth.
    static func error(_ run: TimedRun, truth: Truth) -> Double? {
        guard let profile = run.result.measurements?.profile else { return nil }
        let bytes = profile.sitesAtPeak().filter { $0.site.function == "CalibrationCase.hold(_:)" }
            .reduce(0) { $0 + $1.liveBytes }
        return Double(bytes - truth.bytes) / Double(truth.bytes)
    }
}
