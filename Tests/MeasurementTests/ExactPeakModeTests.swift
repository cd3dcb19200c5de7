import HarnessModel
import Measurement
import Runner
import Scenarios
import TestSupport
import Testing
import WorkloadKit

/// Exact mode inside a binary without the counting malloc family (every test bundle): the hooks say
/// so, and an exact case is refused with how to get the right binary. The counting itself is tested
/// end to end on the built `memharness-exact` (memharnessTests/ExactPeakTests).
struct ExactPeakModeTests {
    @Test func aBinaryWithoutTheInterposerHasNoExactCounts() {
        #expect(!ExactPeak.isAvailable)
        #expect(ExactPeak.liveBytes() == nil)
        #expect(ExactPeak.takePeak() == nil)
        #expect(ExactPeak.selfCheck() == nil)
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
            #expect(error.description.contains("swift build --product memharness-exact"))
        }
    }

    @Test func theLauncherSendsExactCasesToTheCountingBinary() throws {
        var spec = CaseSpec(
            scenario: "s", workload: "w", strategy: "x", repetition: 1, parameters: ParameterValues(),
            steps: [], samplingIntervalNanoseconds: 1_000_000)
        let launcher = ProcessCaseLauncher(executable: "/bin/memharness", exactExecutable: "/bin/memharness-exact")
        #expect(launcher.executable(for: spec) == "/bin/memharness")
        spec.peakMode = .exact
        #expect(launcher.executable(for: spec) == "/bin/memharness-exact")
        let missing = ProcessCaseLauncher(executable: "/bin/memharness").launch(spec)
        #expect(missing.status == .notMeasured)
        #expect(missing.failure?.contains("there is no memharness-exact beside /bin/memharness") == true)
    }
}
