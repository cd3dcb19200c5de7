import HarnessModel
import Measurement
import Runner
import Scenarios
import TestSupport
import Testing
import WorkloadKit

/// Exact mode inside a process without the agent (every test bundle): the readings say so, and an
/// exact case is refused with how to get the agent. The counting itself is tested end to end with the
/// agent preloaded (MemHarnessTests/ExactPeakTests, MemHarnessAgentTests).
@Suite(.timeLimit(.minutes(5)))
struct ExactPeakModeTests {
    @Test func aBinaryWithoutTheInterposerHasNoExactCounts() {
        #expect(!Agent.isLoaded)
        #expect(!Agent.isCounting)
        #expect(Agent.liveBytes() == nil)
        #expect(Agent.takePeak() == nil)
        #expect(Agent.selfCheck() == nil)
    }

    @Test func anExactCaseIsRefusedWithTheBuildCommand() throws {
        let catalog = WorkloadCatalog([BlockWorkload()])
        let spec = try ScenarioParser(catalog: catalog).parse(
            "scenario: s\nworkload: blocks\nstrategies: [release]\npeak: exact\n", file: "s.yaml")
        let caseSpec = try #require(RunPlanner.cases(of: spec, options: RunOptions(repetitions: 1)).first)
        #expect(caseSpec.peakMode == .exact)
        do {
            _ = try CaseExecutor(catalog: catalog).result(caseSpec, scratchDirectory: "/tmp")
            Issue.record("an exact case ran in a binary that does not count allocations")
        } catch let error as MeasurementError {
            guard case .exactPeakUnavailable = error else {
                Issue.record("unexpected error: \(error)")
                return
            }
            #expect(error.description.contains("swift build --product memharness-agent"))
        }
    }

    @Test func theLauncherPreloadsTheAgentIntoExactCasesOnly() throws {
        var spec = CaseSpec(
            scenario: "s", workload: "w", strategy: "x", repetition: 1, parameters: ParameterValues(),
            steps: [], samplingIntervalNanoseconds: 1_000_000)
        let agent = AgentPreload(library: "/lib/libmemharness-agent.so", jemalloc: "/lib/libjemalloc.so.2")
        let launcher = ProcessCaseLauncher(executable: "/bin/memharness", agent: agent)
        #expect(launcher.childEnvironment(for: spec)?["MEMHARNESS_AGENT_EXACT"] == nil)
        spec.peakMode = .exact
        let exact = try #require(launcher.childEnvironment(for: spec))
        #expect(exact["LD_PRELOAD"]?.hasPrefix("/lib/libmemharness-agent.so /lib/libjemalloc.so.2") == true)
        #expect(exact["MEMHARNESS_AGENT_EXACT"] == "1")
        let missing = ProcessCaseLauncher(executable: "/bin/memharness").launch(spec)
        #expect(missing.status == .notMeasured)
        #expect(missing.failure?.message?.contains("there is no libmemharness-agent.so beside /bin/memharness") == true)
    }
}
