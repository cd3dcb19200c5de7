import HarnessModel
import MemHarness
import Runner
import TestSupport
import Testing

/// The lines progress shows for a run's events, and the request `memharness profile` makes.
struct RunEventTextTests {
    let spec = CaseSpec(
        scenario: "s", workload: "w", strategy: "a", repetition: 2, parameters: ParameterValues([:]), steps: [],
        samplingIntervalNanoseconds: 1_000_000)

    @Test func aStartIsAProgressLineAndAnEndALineOfItsOwn() {
        let started = RunEvent.started(index: 3, total: 12, spec: spec)
        #expect(started.progressLine == "[3/12] \(spec.label) …")
        #expect(started.endLine == nil)
        let done = CaseResult.draft(scenario: "s", workload: "w", strategy: "a", repetition: 2) { result in
            result.baselineAllocatedBytes = 1 << 20
            result.peak.allocatedBytes = 3 << 20
        }
        let finished = RunEvent.finished(index: 3, total: 12, result: done, elapsedNanoseconds: 1_250_000_000)
        #expect(finished.progressLine == nil)
        #expect(finished.endLine == "[3/12] \(done.label) 1.3 s, peak 2.00 MiB")
        let failed = CaseResult.draft(strategy: "b", status: .crashed, failure: "Fatal error: boom")
        #expect(failed.failureText?.contains("Fatal error: boom") == true)
        #expect(
            RunEvent.finished(index: 4, total: 12, result: failed, elapsedNanoseconds: 0).endLine
                == "[4/12] \(failed.label) 0.0 s, crashed: \(failed.failureText ?? "")")
        #expect(
            RunEvent.resumed(index: 1, total: 12, result: done).endLine
                == "[1/12] \(done.label) finished before the interruption (resumed)")
    }

    @Test func aProfileRunIsOneProgramScenarioNamedForTheProgram() throws {
        let invocation = ProgramInvocation(executable: "/usr/bin/env", arguments: ["true"])
        let request = RunRequest.profiling(invocation, repetitions: 3, timeout: .seconds(5))
        #expect(request.scenarios.isEmpty, "no file is read")
        let scenario = try #require(request.inlineScenarios.first)
        #expect(request.inlineScenarios.count == 1)
        #expect(scenario.name == "env")
        #expect(scenario.timeout == .seconds(5))
        #expect(RunRequest.profiling(invocation, name: "mine").inlineScenarios.first?.name == "mine")
        let options = RunOptions(interval: .milliseconds(2), peakMode: .exact)
        #expect(RunRequest.profiling(invocation, options: options).options.peakMode == .exact)
    }
}
