import Foundation
import Measurement
import Reports
import Scenarios
import WorkloadKit

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
}

/// Why a run stopped before it had a report.
public enum RunSessionError: Error, CustomStringConvertible, Sendable {
    case run(RunError)
    case report(ReportError)

    public var description: String {
        switch self {
        case .run(let error): return error.description
        case .report(let error): return error.description
        }
    }

    /// The status the command line exits with.
    public var exitStatus: ExitStatus {
        switch self {
        case .run(let error): return error.isUsageError ? .usage : .caseFailed
        case .report(let error): return error.exitStatus
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
        // Before the lock, which creates the folder's parent: a folder that cannot be written is a usage error.
        if let problem = RunPreflight.reportFolderProblem(output.directory) { throw .run(.output(problem)) }
        let lock: ReportFolderLock
        do throws(ReportError) {
            lock = try ReportFolderLock(output.directory)
        } catch {
            throw .report(error)
        }
        defer { withExtendedLifetime(lock) {} }
        ReportFolder.removeStaleStaging(beside: output.directory)
        let plan: RunPlan
        do throws(RunError) {
            plan = try RunPlanner.plan(request, catalog: catalog)
            if let baseline = output.baseline,
                let problem = RunPreflight.baselineProblem(
                    baseline, scenarios: plan.scenarios.map(\.baseName).uniqued())
            {
                throw RunError.baseline(problem)
            }
            if plan.needsExactPeaks, let problem = launcher.exactPeakProblem {
                let file =
                    plan.scenarios.first { $0.cases.contains { $0.peakMode == .exact } }?.spec.file ?? "--peak exact"
                throw RunError.exactPeakUnavailable(file: file, detail: problem)
            }
        } catch {
            throw .run(error)
        }
        let results = RunExecution.execute(plan, launcher: launcher, events: events)
        let report = RunReport(
            plan: plan, results: results,
            environment: MachineEnvironment.current(toolVersion: toolVersion, interval: request.options.interval),
            generatedAt: Timestamp.now())
        let checks = Gate.checks(for: report, baseline: output.baseline, policy: output.gate)
        let record = ReportBundle.record(report, checks: checks, rendering: output.rendering)
        do throws(ReportError) {
            try ReportFolder.write(try ReportBundle.files(record), to: output.directory)
            try RunIndexFile.update(for: output.directory)
        } catch {
            throw .report(error)
        }
        return RunOutcome(record: record, status: Gate.status(of: report, checks: checks, policy: output.gate))
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
