import HarnessModel
import Reports
import Runner
import TestSupport
import Testing
import Verdicts

/// The gate policy without a child process: which checks count, which cases fail a run, and the exit
/// code each verdict maps to.
struct GatePolicyTests {
    static let environment = EnvironmentInfo(
        toolVersion: "0", jemallocVersion: "5", jemallocSettings: [:], swiftVersion: "6", operatingSystem: "l",
        kernel: "k", cpuModel: "c", cpuCount: 2, memoryBytes: 1, requestedIntervalNanoseconds: 1_000_000)

    /// A completed case of `strategy` whose net peak is `net` bytes, or a case that ended as `status`.
    static func result(_ strategy: String, net: Int = 8 << 20, status: CaseStatus = .ok) -> CaseResult {
        CaseResult.draft(scenario: "s", workload: "w", strategy: strategy, status: status) { result in
            result.baselineAllocatedBytes = 1 << 20
            result.peak.allocatedBytes = (1 << 20) + net
        }
    }

    /// A report of one scenario with `cases`, holding `a`'s net peak to at most `limitBytes` when given.
    static func report(_ cases: [CaseResult], limitBytes: Double? = nil, attributed: [CaseResult] = []) -> RunReport {
        var run = ScenarioRun(
            name: "s", file: "s.yaml", workload: "w", summary: "", parameters: [],
            strategies: Set(cases.map(\.strategy)).sorted(), steps: ["burst"], repetitions: 1, cases: cases)
        if let limitBytes {
            run.thresholds = [
                Threshold(
                    subject: FigureReference(strategy: "a", figure: .peakAllocated), comparison: .lessOrEqual,
                    limit: .absolute(limitBytes), text: "a.peakAllocated <= limit", file: "s.yaml", line: 7, column: 5)
            ]
        }
        run.instrumentedCases = attributed
        return RunReport(generatedAt: "t", environment: environment, scenarios: [run])
    }

    @Test func completedCasesWithPassingChecksExit0() {
        let report = Self.report([Self.result("a"), Self.result("b")], limitBytes: Double(16 << 20))
        let verdict = ReportBundle.verdict(for: report)
        #expect(verdict.record.checks.count == 1)
        #expect(verdict.record.checks.allSatisfy { $0.passed })
        #expect(verdict.status == .ok)
        #expect(verdict.status.code == 0)
    }

    @Test func aBreachedThresholdIsAFindingUnlessThresholdsAreNotChecked() {
        let report = Self.report([Self.result("a", net: 32 << 20)], limitBytes: Double(16 << 20))
        let checked = ReportBundle.verdict(for: report)
        #expect(checked.record.checks.map(\.passed) == [false])
        #expect(checked.status == .finding)
        #expect(checked.status.code == 2)
        // --quick: the steps the thresholds were written for were shortened, so they are not evaluated at all.
        let quick = ReportBundle.verdict(for: report, policy: GatePolicy(checkThresholds: false))
        #expect(quick.record.checks.isEmpty)
        #expect(quick.status == .ok)
    }

    @Test func aKillByTheMemoryLimitIsAResultUnlessTheRunFailsOnIt() {
        let report = Self.report([Self.result("a"), Self.result("b", status: .killedByMemoryLimit)])
        #expect(Gate.status(of: report, checks: []) == .ok)
        let strict = Gate.status(of: report, checks: [], policy: GatePolicy(failOnMemoryLimit: true))
        #expect(strict == .finding)
        #expect(strict.code == 2)
    }

    @Test(arguments: [CaseStatus.failed, .crashed, .timedOut, .notMeasured])
    func aCaseThatDidNotCompleteFailsTheRunBeforeAnyFinding(_ status: CaseStatus) {
        // A breached threshold too: a case that could not be measured outranks a finding.
        let report = Self.report(
            [Self.result("a", net: 32 << 20), Self.result("b", status: status)], limitBytes: Double(16 << 20))
        let verdict = ReportBundle.verdict(for: report, policy: GatePolicy(failOnMemoryLimit: true))
        #expect(verdict.record.checks.contains { !$0.passed })
        #expect(verdict.status == .caseFailed)
        #expect(verdict.status.code == 1)
    }

    @Test func anAttributedCaseThatFailedFailsTheRunThoughItsFiguresNeverGate() {
        let attributed = Self.result("a", status: .crashed)
        #expect(Gate.status(of: Self.report([Self.result("a")], attributed: [attributed]), checks: []) == .caseFailed)
        // Its figures are not checked: a huge attributed peak breaks no threshold.
        let huge = Self.result("a", net: 1 << 30)
        let report = Self.report([Self.result("a")], limitBytes: Double(16 << 20), attributed: [huge])
        #expect(ReportBundle.verdict(for: report).status == .ok)
    }

    @Test func everyExitStatusHasItsDocumentedCode() {
        let codes: [(HarnessModel.ExitStatus, Int32)] = [
            (.ok, 0), (.caseFailed, 1), (.finding, 2), (.usage, 64), (.ioError, 74), (.locked, 75),
            (.interrupted(signal: 2), 130), (.interrupted(signal: 15), 143), (.interrupted(signal: 1), 129),
        ]
        for (status, code) in codes {
            #expect(status.code == code, "\(status)")
        }
    }

    @Test func theVerdictKeepsTheRenderingItIsGiven() {
        let rendering = RenderingOptions(samplesMaxRows: 7, chartScale: .log)
        let verdict = ReportBundle.verdict(for: Self.report([Self.result("a")]), rendering: rendering)
        #expect(verdict.record.rendering == rendering)
        #expect(verdict.record.schema == RunRecord.currentSchema)
    }
}
