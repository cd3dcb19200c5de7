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
