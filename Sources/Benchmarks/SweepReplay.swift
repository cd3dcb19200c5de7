import BuiltInWorkloads
import FileIO
import Foundation
import HarnessModel
import Reports
import Runner
import Synchronization
import WorkloadKit

/// Resuming, with the measurements held still: the outcomes of a real run replayed in this process through
/// the runner (its queue, its two jobs, its journal) with the clock fixed, once straight through and once
/// stopped halfway and resumed from the journal. Every file of the two reports is compared byte for byte.
struct ReplayComparison {
    var plannedCases: Int
    /// Results the stopped replay left in its journal.
    var journaled: Int
    /// Cases the resumed replay ran (the others came from the journal).
    var ranOnResume: Int
    var files: Int
    var bytes: Int
    /// Files whose bytes differ between the two reports (or that only one has).
    var differing: [String]

    static func run(_ whole: RunRecord, scenarioFile: String, sweep: String, directory: String) throws
        -> ReplayComparison
    {
        var request = RunRequest(scenarios: [scenarioFile], overrides: [sweep])
        request.options.jobs = 2
        let plan = try RunPlanner.plan(request, catalog: BuiltInWorkloads.catalog)
        let outcomes = Dictionary(
            whole.report.scenarios.flatMap(\.cases).map { (CaseKey($0), $0.outcome) },
            uniquingKeysWith: { first, _ in first })

        let straight = try replay(plan, outcomes, out: "\(directory)/replay-whole", resume: false, stopAfter: nil)
        let half = plan.cases.count / 2
        let stopped = try replay(plan, outcomes, out: "\(directory)/replay-resumed", resume: false, stopAfter: half)
        let resumed = try replay(plan, outcomes, out: "\(directory)/replay-resumed", resume: true, stopAfter: nil)

        let one = try files(straight.results, plan: plan, like: whole)
        let other = try files(resumed.results, plan: plan, like: whole)
        let paths = Set(one.map(\.path)).union(other.map(\.path)).sorted()
        let oneByPath = Dictionary(one, uniquingKeysWith: { first, _ in first })
        let otherByPath = Dictionary(other, uniquingKeysWith: { first, _ in first })
        return ReplayComparison(
            plannedCases: plan.cases.count, journaled: stopped.results.count, ranOnResume: resumed.launched,
            files: paths.count, bytes: one.reduce(0) { $0 + $1.data.count },
            differing: paths.filter { oneByPath[$0] != otherByPath[$0] })
    }

    /// Runs `plan` with the replaying launcher and a journal into `out` (resuming it when `resume`), stopping
    /// once `stopAfter` cases have been launched; the results and how many cases were launched.
    static func replay(
        _ plan: RunPlan, _ outcomes: [CaseKey: CaseOutcome], out: String, resume: Bool, stopAfter: Int?
    ) throws -> (results: [CaseResult], launched: Int) {
        let launcher = ReplayLauncher(outcomes: outcomes)
        let journal = try RunJournal(output: out, cases: plan.cases, resume: resume)
        let results = RunExecution.execute(
            plan, launcher: launcher, journal: journal,
            stopRequested: { stopAfter.map { launcher.launched >= $0 } ?? false }, clock: { 0 })
        if stopAfter == nil { journal.discard() }
        return (results, launcher.launched)
    }

    /// The report folder's files for `results`, with the uninterrupted run's date, machine, wall time and
    /// rendering options.
    static func files(_ results: [CaseResult], plan: RunPlan, like whole: RunRecord) throws -> [(
        path: String, data: Data
    )] {
        let report = RunReport(
            plan: plan, results: results, environment: whole.report.environment,
            generatedAt: whole.report.generatedAt, elapsedNanoseconds: whole.report.elapsedNanoseconds)
        return try ReportBundle.files(ReportBundle.verdict(for: report, rendering: whole.rendering).record)
    }
}

/// Gives each case the outcome a real run measured for it, at once.
final class ReplayLauncher: CaseLaunching {
    let outcomes: [CaseKey: CaseOutcome]
    private let launches = Atomic<Int>(0)

    init(outcomes: [CaseKey: CaseOutcome]) { self.outcomes = outcomes }

    /// Cases launched so far.
    var launched: Int { launches.load(ordering: .relaxed) }

    /// True, so the runner runs the sweep's cases two at a time, as the real run did.
    var runsCasesInTheirOwnProcess: Bool { true }
    var agentProblem: String? { nil }

    func launch(_ spec: CaseSpec) -> CaseOutcome {
        launches.add(1, ordering: .relaxed)
        let key = CaseKey(scenario: spec.scenario, strategy: spec.strategy, repetition: spec.repetition)
        return outcomes[key] ?? .notMeasured(reason: "no outcome recorded for \(spec.label)")
    }
}
