import FileIO
import Foundation
import HarnessModel
import Reports
import Scenarios
import Synchronization
import TestSupport
import Testing
import WorkloadKit

@testable import Runner

/// A run stopped partway and resumed from its journal gives the report an uninterrupted run gives: the same
/// results in the same order, and the same bytes in every file, the clock held still.
@Suite struct ResumeTests {
    let catalog = WorkloadCatalog([ExampleWorkload()])

    /// A scenario of `repetitions: auto` (the noisy strategy gets repetitions added as rounds end) and one
    /// that may run two cases at once.
    func plan() throws -> RunPlan {
        let parser = ScenarioParser(catalog: catalog)
        var request = RunRequest()
        request.inlineScenarios = [
            try parser.parse(
                "scenario: adaptive\nworkload: example\nrepetitions: {min: 6, max: 8}\n", file: "adaptive.yaml"),
            try parser.parse(
                "scenario: side-by-side\nworkload: example\nrepetitions: 4\nparallel: true\n", file: "p.yaml"),
        ]
        request.options.jobs = 2
        return try RunPlanner.plan(request, catalog: catalog)
    }

    /// Runs `plan` with a journal into `out`; stops once `stopAfter` cases were launched.
    func execute(_ plan: RunPlan, out: String, resume: Bool, stopAfter: Int? = nil) throws -> (
        results: [CaseResult], launched: Int
    ) {
        let launcher = ScriptedLauncher()
        let journal = try RunJournal(output: out, cases: plan.cases, resume: resume)
        let results = RunExecution.execute(
            plan, launcher: launcher, journal: journal,
            stopRequested: { stopAfter.map { launcher.launched >= $0 } ?? false }, clock: { 0 })
        if stopAfter == nil { journal.discard() }
        return (results, launcher.launched)
    }

    static let environment = EnvironmentInfo(
        toolVersion: "0.2.0", jemallocVersion: "5.3.0", jemallocSettings: [:], swiftVersion: "6.3",
        operatingSystem: "Debian GNU/Linux 12 (bookworm)", kernel: "Linux 6.1 x86_64", cpuModel: "Example CPU",
        cpuCount: 2, memoryBytes: 8 << 30, requestedIntervalNanoseconds: 1_000_000)

    /// A folder of its own under /tmp for one test's journals, removed when the test ends.
    final class Scratch {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("memharness-resume-\(UUID())").path
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    func files(_ results: [CaseResult], plan: RunPlan) throws -> [(path: String, data: Data)] {
        let report = RunReport(
            plan: plan, results: results, environment: Self.environment, generatedAt: "2026-11-26T12:00:00Z",
            elapsedNanoseconds: 1_000_000_000)
        return try ReportBundle.files(ReportBundle.verdict(for: report).record)
    }

    @Test func aResumedRunWritesTheReportOfAnUninterruptedOne() throws {
        let folder = try Scratch()
        let plan = try plan()
        let whole = try execute(plan, out: "\(folder.path)/whole", resume: false)
        #expect(whole.results.count > plan.cases.count, "the adaptive scenario added repetitions")

        let stopped = try execute(plan, out: "\(folder.path)/resumed", resume: false, stopAfter: 5)
        let journal = RunJournal.path(for: "\(folder.path)/resumed")
        // The journal holds what finished before the stop, and only that.
        #expect(!stopped.results.isEmpty && stopped.results.count < whole.results.count)
        #expect(RunJournal.interruptedCases(for: "\(folder.path)/resumed") == stopped.results.count)

        let resumed = try execute(plan, out: "\(folder.path)/resumed", resume: true)
        #expect(resumed.launched == whole.results.count - stopped.results.count, "only the unfinished cases ran")
        #expect(resumed.results == whole.results)
        #expect(!FileManager.default.fileExists(atPath: journal), "the journal goes once the run is complete")

        let expected = try files(whole.results, plan: plan)
        let found = try files(resumed.results, plan: plan)
        #expect(found.map(\.path) == expected.map(\.path))
        for (one, other) in zip(found, expected) { #expect(one.data == other.data, "\(one.path)") }
    }

    @Test func onlyTheSamePlanResumes() throws {
        let folder = try Scratch()
        let plan = try plan()
        #expect {
            _ = try RunJournal(output: "\(folder.path)/out", cases: plan.cases, resume: true)
        } throws: { error in
            guard case .nothingToResume? = error as? RunError else { return false }
            return true
        }
        _ = try execute(plan, out: "\(folder.path)/out", resume: false, stopAfter: 3)
        #expect(RunJournal.interruptedCases(for: "\(folder.path)/out") == 2)
        var other = plan.cases
        other[1].repetition += 10
        #expect {
            _ = try RunJournal(output: "\(folder.path)/out", cases: other, resume: true)
        } throws: { error in
            guard case .resumeMismatch(_, let detail)? = error as? RunError else { return false }
            return detail.hasPrefix("case 2 was ")
        }
        _ = try RunJournal(output: "\(folder.path)/out", cases: plan.cases, resume: true)
    }

    @Test func thePlanIsKeptOneCaseALine() throws {
        let cases = try plan().cases
        let data = try RunJournal.encodePlan(cases)
        #expect(data.split(separator: UInt8(ascii: "\n")).count == cases.count)
        #expect(RunJournal.decodePlan(data) == cases)
        #expect(RunJournal.decodePlan(Data("{\"not\": \"a case\"}\n".utf8)) == nil)
    }
}

/// Outcomes made from the case alone, at once: the same every time a case runs. `signal-next` of the
/// adaptive scenario is noisy (±20%), so its rounds ask for more repetitions.
final class ScriptedLauncher: CaseLaunching {
    private let launches = Atomic<Int>(0)

    var launched: Int { launches.load(ordering: .relaxed) }
    var runsCasesInTheirOwnProcess: Bool { true }
    var agentProblem: String? { nil }

    func launch(_ spec: CaseSpec) -> CaseOutcome {
        launches.add(1, ordering: .relaxed)
        let noise = [100, 120, 80, 100, 90, 110][(spec.repetition - 1) % 6]
        let net = spec.strategy == "signal-next" ? noise * 1_000 : 5_000_000 + spec.repetition
        return CaseResult.draft(scenario: spec.scenario, strategy: spec.strategy, repetition: spec.repetition) {
            $0.baselineAllocatedBytes = 1_000_000
            $0.peak.allocatedBytes = 1_000_000 + net
            $0.durationNanoseconds = 1_000_000 * Int64(spec.repetition)
            // A value without a short decimal form: the journal must keep it exactly.
            $0.metrics = [Metric(name: "callbacks", value: 0.1 + 0.2 * Double(spec.repetition), unit: .count)]
        }.outcome
    }
}
