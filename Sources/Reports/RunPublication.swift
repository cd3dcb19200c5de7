import FileIO
import Foundation
import HarnessModel

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

/// What a published run gives its caller: the record it wrote and the status to exit with.
public struct RunOutcome: Sendable {
    public var record: RunRecord
    public var status: ExitStatus
    /// What went wrong after the report was in place (the report itself is complete), for the caller to show.
    public var warnings: [String] = []
}

/// The last stage of `memharness run`, at the edge: a `RunReport` becomes its record (`ReportBundle.verdict`,
/// pure), the record becomes the report folder (one transaction), and the run index beside it is rewritten.
public enum RunPublication {
    /// Publishes `report` to `output.directory`. Nil when `proceed` turned false before the new folder was in
    /// place (a signal came): the previous report is then untouched. Errors mean there is no new report.
    public static func publish(
        _ report: RunReport, to output: RunOutput, proceed: @escaping () -> Bool = { true }
    ) throws(ReportError) -> RunOutcome? {
        let verdict = ReportBundle.verdict(
            for: report, baseline: output.baseline, policy: output.gate, rendering: output.rendering)
        let installed = try ReportFolder.write(to: output.directory, proceed: proceed) {
            emit throws(ReportError) in try ReportBundle.produce(verdict.record, emit)
        }
        guard installed else { return nil }
        var outcome = RunOutcome(record: verdict.record, status: verdict.status)
        outcome.warnings = updateIndex(beside: output.directory)
        return outcome
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
