import Foundation
import HarnessModel
import Measurement
import Reports
import Scenarios
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Where a run's report goes and how it is gated.
public struct RunOutput: Sendable {
    /// The report folder.
    public var directory: String
    public var rendering: RenderingOptions
    public var gate: GatePolicy
    /// A baseline to compare with, already read.
    public var baseline: BaselineReference?

    public init(
        directory: String, rendering: RenderingOptions = RenderingOptions(), gate: GatePolicy = GatePolicy(),
        baseline: BaselineReference? = nil
    ) {
        self.directory = directory
        self.rendering = rendering
        self.gate = gate
        self.baseline = baseline
    }
}

/// What a finished run gives its caller: the record it wrote and the status to exit with.
public struct RunOutcome: Sendable {
    public var record: RunRecord
    public var status: ExitStatus
    /// What went wrong after the report was in place (the report itself is complete), for the caller to show.
    public var warnings: [String] = []
}

/// Why a run stopped before it had a report.
public enum RunSessionError: Error, CustomStringConvertible, Sendable {
    case run(RunError)
    case report(ReportError)
    /// A signal stopped the run after `finishedCases` of `totalCases` cases; no report was written, and
    /// the finished cases are kept for `--resume`.
    case interrupted(signal: Int32, finishedCases: Int, totalCases: Int)

    public var description: String {
        switch self {
        case .run(let error): return error.description
        case .report(let error): return error.description
        case .interrupted(let signal, let finished, let total):
            return "interrupted by \(SignalNames.name(of: signal)) after \(finished) of \(total) cases: every case "
                + "process was stopped and the previous report left as it was"
                + (finished > 0 ? "; run the same command with --resume to run the other \(total - finished)" : "")
        }
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

/// One `memharness run`, from request to report folder: check the folder, lock it, plan (every input checked,
/// the baseline against the scenarios),
/// run the cases, assemble the report, evaluate the checks, write the folder in one transaction.
public enum RunSession {
    /// Runs `request` and writes its report to `output.directory`. Findings are in the outcome's status;
    /// errors mean there is no new report (the previous one is untouched).
    public static func run(
        _ request: RunRequest, catalog: WorkloadCatalog, launcher: some CaseLaunching, output: RunOutput,
        toolVersion: String, events: (RunEvent) -> Void = { _ in }
    ) throws(RunSessionError) -> RunOutcome {
        // SIGINT, SIGTERM, SIGHUP: every case process is killed at once and the run stops (exit 128 + N).
        Interruption.install()
        let plan: RunPlan
        do throws(RunError) {
            plan = try checkedPlan(request, catalog: catalog, launcher: launcher, output: output)
        } catch {
            throw .run(error)
        }
        let (lock, directory) = try prepare(output.directory)
        defer {
            withExtendedLifetime(lock) {}
            directory.finish()
        }
        ReportFolder.removeStaleStaging(beside: output.directory)
        let journal: RunJournal
        do throws(RunError) {
            journal = try RunJournal(output: output.directory, cases: plan.cases, resume: request.options.resume)
        } catch {
            throw .run(error)
        }
        let start = MonotonicClock.nanoseconds()
        let results = RunExecution.execute(plan, launcher: launcher, journal: journal, events: events)
        let elapsed = MonotonicClock.nanoseconds() - start
        // Interrupted: the cases that ran are not a run; the previous report stays as it was, and the
        // journal keeps them for --resume.
        if let signal = Interruption.signal {
            throw .interrupted(signal: signal, finishedCases: results.count, totalCases: plan.cases.count)
        }
        var report = RunReport(
            plan: plan, results: results,
            environment: MachineEnvironment.current(toolVersion: toolVersion, interval: request.options.interval),
            generatedAt: Timestamp.now())
        report.elapsedNanoseconds = elapsed
        let verdict = Gate.verdict(for: report, baseline: output.baseline, policy: output.gate)
        let record = ReportBundle.record(report, checks: verdict.record.checks, rendering: output.rendering)
        let installed: Bool
        do throws(ReportError) {
            // A signal before the new report is in place abandons it: the previous report stays as it was.
            installed = try ReportFolder.write(
                to: output.directory, proceed: { Interruption.signal == nil },
                { emit throws(ReportError) in try ReportBundle.produce(record, emit) })
        } catch {
            throw .report(error)
        }
        guard installed else {
            throw .interrupted(
                signal: Interruption.signal ?? SIGINT, finishedCases: results.count, totalCases: plan.cases.count)
        }
        journal.discard()
        var outcome = RunOutcome(record: record, status: verdict.status)
        outcome.warnings = updateIndex(beside: output.directory)
        return outcome
    }

    /// Checks and locks the output folder, after every input is validated and before the first case; the run's
    /// working folder and its guard come first, so the guard does not hold the lock.
    private static func prepare(_ output: String) throws(RunSessionError) -> (ReportFolderLock, RunDirectory) {
        do throws(ReportError) {
            try ReportFolder.checkReplaceable(output)
            let directory = try RunDirectory(output: output)
            do throws(ReportError) {
                return (try ReportFolderLock(output), directory)
            } catch {
                // Locked by another run: leave at once, our own working folder removed.
                directory.finish()
                throw error
            }
        } catch {
            throw .report(error)
        }
    }

    /// Rewrites the index beside a report folder of `Reports/`; the warning when it cannot (the report is
    /// complete and in place; the index is a listing the next run rewrites).
    private static func updateIndex(beside directory: String) -> [String] {
        do throws(ReportError) {
            try RunIndexFile.update(for: directory)
            return []
        } catch {
            var detail = error.description
            if case .unwritable(let path, let reason) = error { detail = "\(path): \(reason)" }
            return ["\(detail); the report itself is complete"]
        }
    }

    /// The plan of `request`, with everything else a run needs checked before any work: the baseline
    /// covers its scenarios, the agent is there when a case needs it, the output folder can be written.
    static func checkedPlan(
        _ request: RunRequest, catalog: WorkloadCatalog, launcher: some CaseLaunching, output: RunOutput
    ) throws(RunError) -> RunPlan {
        let plan = try RunPlanner.plan(request, catalog: catalog)
        if let baseline = output.baseline,
            let problem = RunPreflight.baselineProblem(baseline, scenarios: plan.scenarios.map(\.baseName).uniqued())
        {
            throw .baseline(problem)
        }
        if plan.needsAgent, let problem = launcher.agentProblem {
            let needing = plan.scenarios.first { planned in
                planned.cases.contains { $0.peakMode == .exact || $0.attribution != nil || $0.program != nil }
            }
            throw .agentUnavailable(file: needing?.spec.file ?? "--peak exact", detail: problem)
        }
        // Before the lock, which creates the folder's parent: a folder that cannot be written is a usage error.
        if let problem = RunPreflight.reportFolderProblem(output.directory) { throw .output(problem) }
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

/// `Reports/index.md`: rewritten when a run writes a folder of `Reports/`.
public enum RunIndexFile {
    /// Rewrites `index.md` in the parent folder when `directory` is a folder of a folder named `Reports`.
    public static func update(for directory: String) throws(ReportError) {
        let parent = URL(fileURLWithPath: directory).standardizedFileURL.deletingLastPathComponent()
        guard parent.lastPathComponent == "Reports" else { return }
        // An unlistable Reports/ lists nothing: the index is a convenience, the run's own folder is already written.
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []).sorted()
        let entries = folders.filter { !$0.hasPrefix(".") }.compactMap { folder -> RunIndex.Entry? in
            // A folder that is not a readable report of this version is simply not listed.
            guard let record = try? ReportFolder.read(parent.appendingPathComponent(folder).path) else { return nil }
            return RunIndex.Entry(folder: folder, report: record.report)
        }
        try ReportFolder.replaceFile(
            Data(RunIndex.render(entries).utf8), at: parent.appendingPathComponent("index.md").path)
    }
}
