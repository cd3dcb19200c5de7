import FileIO
import Foundation
import HarnessModel
import Measurement
import Scenarios
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Why a run stopped before it had a report.
public enum RunSessionError: Error, CustomStringConvertible, Sendable {
    case run(RunError)
    case report(ReportError)
    /// A signal stopped the run after `finishedCases` of `totalCases` cases, or while its report was being
    /// published (then every case had finished); no report was written, and the finished cases are kept for
    /// `--resume`.
    case interrupted(signal: Int32, finishedCases: Int, totalCases: Int)

    public var description: String {
        switch self {
        case .run(let error): return error.description
        case .report(let error): return error.description
        case .interrupted(let signal, let finished, let total):
            let resume =
                finished >= total && total > 0
                ? "; every case had finished: run the same command with --resume to write the report without "
                    + "running them again"
                : finished > 0 ? "; run the same command with --resume to run the other \(total - finished)" : ""
            return "interrupted by \(SignalNames.name(of: signal)) after \(finished) of \(total) cases: every case "
                + "process was stopped and the previous report left as it was" + resume
        }
    }

    /// A signal came while `report` was being published: every case had finished.
    public static func interrupted(publishing report: RunReport) -> RunSessionError {
        let cases = report.scenarios.reduce(0) { $0 + $1.cases.count + $1.instrumentedCases.count }
        return .interrupted(signal: Interruption.signal ?? SIGINT, finishedCases: cases, totalCases: cases)
    }

    /// The status the command line exits with.
    public var exitStatus: ExitStatus {
        switch self {
        case .run(let error): return error.isUsageError ? .usage : .caseFailed
        case .report(let error): return error.exitStatus
        case .interrupted(let signal, _, _): return .interrupted(signal: signal)
        }
    }
}

/// One `memharness run` up to its report, as a chain of stages: request → plan (every input checked, the
/// baseline against the scenarios) → case results (the output folder claimed, each case in its process, kept
/// in the journal) → `RunReport`. It stops there: the record, the folder write and the run index are the
/// edge's (`RunPublication.publish`, while `folder` is still held).
public enum RunSession {
    /// Runs `request` into a `RunReport`. `folder` is claimed after the plan is checked and stays claimed
    /// (locked, its journal kept) until the caller releases it. Findings are in the report; errors mean there
    /// is no report (the previous one is untouched).
    public static func run(
        _ request: RunRequest, catalog: WorkloadCatalog, launcher: some CaseLaunching, folder: RunFolder,
        baseline: BaselineReference? = nil, toolVersion: String, events: (RunEvent) -> Void = { _ in }
    ) throws(RunSessionError) -> RunReport {
        // SIGINT, SIGTERM, SIGHUP: every case process is killed at once and the run stops (exit 128 + N).
        Interruption.install()
        let plan = try Self.plan(request, catalog: catalog, launcher: launcher, output: folder.path, baseline: baseline)
        let start = MonotonicClock.nanoseconds()
        let results = try caseResults(plan, launcher: launcher, folder: folder, resume: request.options.resume, events)
        return RunReport(
            plan: plan, results: results,
            environment: MachineEnvironment.current(
                toolVersion: toolVersion,
                interval: request.options.interval ?? RunOptions.defaultInterval(serving: false)),
            generatedAt: Timestamp.now(), elapsedNanoseconds: MonotonicClock.nanoseconds() - start)
    }

    /// Claims `folder` and runs the cases of `plan`. Interrupted, the cases that ran are not a run: it throws,
    /// the previous report stays as it was, and the journal keeps them for `--resume`.
    private static func caseResults(
        _ plan: RunPlan, launcher: some CaseLaunching, folder: RunFolder, resume: Bool, _ events: (RunEvent) -> Void
    ) throws(RunSessionError) -> [CaseResult] {
        let journal = try folder.claim(cases: plan.cases, resume: resume)
        let results = RunExecution.execute(plan, launcher: launcher, journal: journal, events: events)
        if let signal = Interruption.signal {
            throw .interrupted(signal: signal, finishedCases: results.count, totalCases: plan.cases.count)
        }
        return results
    }

    /// The plan of `request`, with everything else a run needs checked before any work: the baseline
    /// covers its scenarios, the agent is there when a case needs it, the output folder can be written.
    static func plan(
        _ request: RunRequest, catalog: WorkloadCatalog, launcher: some CaseLaunching, output: String,
        baseline: BaselineReference?
    ) throws(RunSessionError) -> RunPlan {
        do throws(RunError) {
            return try checkedPlan(request, catalog: catalog, launcher: launcher, output: output, baseline: baseline)
        } catch {
            throw .run(error)
        }
    }

    private static func checkedPlan(
        _ request: RunRequest, catalog: WorkloadCatalog, launcher: some CaseLaunching, output: String,
        baseline: BaselineReference?
    ) throws(RunError) -> RunPlan {
        var plan = try RunPlanner.plan(request, catalog: catalog)
        if launcher.agentProblem != nil || !launcher.runsCasesInTheirOwnProcess {
            plan = plan.withoutImplicitHeapGraphs()
        }
        if let baseline,
            let problem = RunPreflight.baselineProblem(baseline, scenarios: plan.scenarios.map(\.baseName).uniqued())
        {
            throw .baseline(problem)
        }
        if plan.needsAgent, let problem = launcher.agentProblem {
            let needing = plan.scenarios.first { planned in
                planned.cases.contains(where: \.needsAgent)
            }
            throw .agentUnavailable(file: needing?.spec.file ?? "--peak exact", detail: problem)
        }
        // Before the lock, which creates the folder's parent: a folder that cannot be written is a usage error.
        if let problem = RunPreflight.reportFolderProblem(output) { throw .output(problem) }
        return plan
    }
}

/// The clock of report dates.
public enum Timestamp {
    /// Now, ISO 8601 UTC to the second.
    public static func now() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date())
    }
}
