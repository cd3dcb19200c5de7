/// What gating a run decided: the record (the report with its checks) and the status the run exits with.
public struct GateVerdict: Sendable, Hashable {
    /// The report, the checks evaluated on it and how it is rendered.
    public var record: RunRecord
    /// `Gate.status` of the report and its checks.
    public var status: ExitStatus

    public init(record: RunRecord, status: ExitStatus) {
        self.record = record
        self.status = status
    }
}

extension Gate {
    /// Evaluates the checks of `report` (`checks(for:baseline:policy:)`) and the status they give
    /// (`status(of:checks:policy:)`), with the record that keeps them: what `run`, `compare` and `merge` gate on.
    public static func verdict(
        for report: RunReport, baseline: BaselineReference? = nil, policy: GatePolicy = GatePolicy(),
        rendering: RenderingOptions = RenderingOptions()
    ) -> GateVerdict {
        let checks = checks(for: report, baseline: baseline, policy: policy)
        return GateVerdict(
            record: RunRecord(report: report, checks: checks, rendering: rendering),
            status: status(of: report, checks: checks, policy: policy))
    }
}
