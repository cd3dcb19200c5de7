import ChildProcesses
import FileIO
import Foundation
import HarnessModel
import Reports

/// The `memharness history` commands timed on the scale benchmark's store, when the release `memharness` sits
/// beside this binary (`make bench-history` builds both): process start, reading run.json, the store and its
/// index, as a CI job pays them.
enum CommandBench {
    static func run(store: String, root: String) throws -> String? {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("memharness").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { return nil }
        let folder = "\(root)/run"
        try ReportFolder.render(RunRecord(report: report(), checks: []), to: folder)
        let records = try (0..<11).map { index in
            try time(
                binary,
                [
                    "history", "record", folder, "--store", store, "--commit", String(format: "%040x", 90_000 + index),
                    "--branch", "main", "--time", "2031-01-01T00:00:\(String(format: "%02d", index))Z", "--machine",
                    "m",
                ])
        }
        let shows = try (0..<5).map { _ in
            try time(binary, ["history", "show", "--store", store, "--out", "\(root)/cli-history"])
        }
        let gates = try (0..<5).map { _ in try time(binary, ["history", "gate", "--store", store]) }
        return """
            ## The commands at that scale

            The release `memharness` beside `history-bench`, on the store above; each line the median wall time.

            | Command | Time |
            |---|---:|
            | `history record DIR --commit SHA --branch B --time T --machine M` (a run of 5 strategies; 11 runs) | \(ScaleBench.seconds(ScaleBench.median(records))) |
            | `history show --out DIR` (100 series, 100 charts; 5 runs) | \(ScaleBench.seconds(ScaleBench.median(shows))) |
            | `history gate` (5 runs) | \(ScaleBench.seconds(ScaleBench.median(gates))) |

            """
    }

    /// The wall time of `binary ARGUMENTS` (its output discarded; a failure ends the benchmark).
    static func time(_ binary: String, _ arguments: [String]) throws -> Duration {
        let start = ContinuousClock.now
        let child = try ChildProcess.spawn(
            path: binary, arguments: arguments, environment: ProcessInfo.processInfo.environment)
        // `gate` exits with 2 when the newest run stepped: a verdict, not a failure of the command.
        guard case .ended(let end) = try child.wait(upTo: 600_000_000_000),
            [0, 2].contains(end.termination.shellStatus)
        else { throw BenchFailure(message: "memharness \(arguments.joined(separator: " ")) failed") }
        return start.duration(to: .now)
    }

    struct BenchFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// A run of one scenario, five strategies of three repetitions, as run.json holds it.
    static func report() -> RunReport {
        let strategies = (0..<5).map { "strategy-\($0)" }
        let cases = strategies.enumerated().flatMap { position, strategy in
            (1...3).map { repetition in
                let peak = 1_048_576 * (position + 1) + repetition * 4096
                let measurements = CaseMeasurements(
                    baselineAllocatedBytes: 0, peak: AllocatorStatsValues(allocatedBytes: peak), peakRSSBytes: peak * 2,
                    residueBytes: 4096, durationNanoseconds: 100_000_000)
                return CaseResult(
                    scenario: "bench", workload: "w", strategy: strategy, repetition: repetition,
                    outcome: .completed(measurements: measurements))
            }
        }
        let environment = EnvironmentInfo(
            toolVersion: "bench", jemallocVersion: "", jemallocSettings: [:], swiftVersion: "", operatingSystem: "",
            kernel: "", cpuModel: "bench", cpuCount: 2, memoryBytes: 0, requestedIntervalNanoseconds: 1_000_000)
        let run = ScenarioRun(
            name: "bench", file: "bench.yaml", workload: "w", summary: "", parameters: [], strategies: strategies,
            steps: ["run"], repetitions: 3, cases: cases)
        return RunReport(generatedAt: "2031-01-01T00:00:00Z", environment: environment, scenarios: [run])
    }
}
