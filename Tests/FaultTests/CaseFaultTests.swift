import FileIO
import Foundation
import HarnessModel
import Reports
import Testing

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Cases that end badly are rows that say how: a Swift runtime trap carries its fatal-error message, a kill
/// from outside (the kernel's OOM killer sends SIGKILL) says so, a timed-out case keeps its samples, and
/// nothing a case started outlives it. (A case stopped by its memory limit: MemoryBudgetCommandLineTests.)
@Suite(.serialized, .timeLimit(.minutes(10)))
struct CaseFaultTests {
    static let trapProbe = HarnessProcess.buildDirectory.appendingPathComponent("trap-probe").path

    /// Runs `yaml` to its end and returns the run's one case, after checking the run left nothing behind.
    func onlyCase(of yaml: String, exit expected: Int32, _ arguments: [String] = []) throws -> CaseResult {
        let trial = try Trial()
        let scenario = try trial.scenario(yaml)
        let run = try trial.start(["run", scenario, "--out", trial.out] + arguments)
        let ending = try run.finish(within: 60, "the run")
        #expect(ending == .exited(expected), "\(trial.stderrText)")
        let left = trial.leftovers(of: [run.pid], within: 1)
        #expect(left.processes.isEmpty, "\(left.processes)")
        #expect(left.files.isEmpty, "\(left.files)")
        let record = try ReportFolder.read(trial.out)
        return try #require(record.report.scenarios.first?.cases.first)
    }

    @Test func aSwiftRuntimeTrapCarriesItsFatalErrorMessage() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.trapProbe),
            "\(Self.trapProbe) is missing: swift build --product trap-probe")
        let yaml = """
            scenario: fault-trap
            workload: command
            strategies:
              - name: trap
                command: [\(Self.trapProbe)]
            repetitions: 1
            settle: 0ms

            """
        let result = try onlyCase(of: yaml, exit: 1)
        #expect(result.status == .crashed)
        let failure = try #require(result.failureText)
        #expect(failure.contains("Fatal error: trap-probe stops here on purpose at main.swift:11"), "\(failure)")
        #expect(!failure.contains("Backtrace"), "the message, not the backtrace: \(failure)")
    }

    @Test func anAbortedCaseSaysSoNotTheTailOfItsBacktrace() throws {
        let yaml = Scenarios.quick.replacingOccurrences(
            of: "strategies: [hold-large, churn]", with: "strategies: [crash]")
        let result = try onlyCase(of: yaml, exit: 1)
        #expect(result.status == .crashed)
        let failure = try #require(result.failureText)
        // With the Swift runtime's backtracer on (the default) the summary of its report; off, nothing more.
        #expect(
            failure == "killed by signal 6 (SIGABRT): Program crashed: Aborted"
                || failure == "killed by signal 6 (SIGABRT)", "\(failure)")
    }

    @Test func aKillFromOutsideSaysItWasNotTheHarness() throws {
        let result = try onlyCase(of: Scenarios.shell("sleep 0.3; kill -KILL $$"), exit: 1)
        #expect(result.status == .crashed)
        let failure = try #require(result.failureText)
        #expect(failure.hasPrefix("killed by signal 9 (SIGKILL)"), "\(failure)")
        #expect(failure.contains("out-of-memory killer"), "\(failure)")
    }

    @Test func aTimedOutCaseKeepsItsSamples() throws {
        let result = try onlyCase(of: Scenarios.slow(seconds: 20, timeout: "1s"), exit: 1)
        #expect(result.status == .timedOut)
        let samples = try #require(result.measurements?.samples, "the samples of the second before the timeout")
        #expect(samples.timeNanoseconds.count > 10)
        // A timed-out case states no floor (its teardown never ran): the sampled net peak may read the block
        // less what the harness freed of the baseline meanwhile, a few hundred bytes; 16 KiB is room for that.
        let peak = result.measurements?.peakAllocatedNetBytes ?? 0
        let floor = result.measurements?.peakUncertaintyBytes ?? 16 << 10
        #expect(peak >= (1 << 20) - floor, "the 1 MiB it held is in its samples: \(peak) B ± \(floor) B")
    }

    @Test func whatACaseStartedDoesNotOutliveIt() throws {
        // The program ends at once; the `sleep 30` it started in the background would run on after the case.
        let result = try onlyCase(of: Scenarios.shell("sleep 30 & sleep 0.3"), exit: 0)
        #expect(result.status == .ok)
    }

    @Test func anIndexThatCannotBeReplacedDoesNotLoseTheRun() throws {
        let trial = try Trial()
        try trial.placePrevious()
        // A folder where Reports/index.md goes: the index cannot be replaced, the report can.
        try FileManager.default.createDirectory(atPath: "\(trial.reports)/index.md", withIntermediateDirectories: false)
        let scenario = try trial.scenario(Scenarios.quick)
        let run = try trial.start(["run", scenario, "--out", trial.out])
        let ending = try run.finish(within: 60, "the run")
        let (findings, _) = trial.judge(
            run, ending: ending, elapsed: nil,
            Expectation(endings: [.exited(0)], withinSeconds: nil, folder: [.complete], message: nil))
        #expect(findings.isEmpty, "\(findings.all)")
        #expect(
            trial.stderrText.contains(
                "warning: \(trial.reports)/index.md: Is a directory; the report itself is complete"),
            "\(trial.stderrText)")
    }
}
