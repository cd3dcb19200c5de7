import HarnessModel
import Reports
import Runner

extension RunEvent {
    /// The progress line of a case that started (`[3/12] scenario / strategy #2 …`), redrawn in place on an
    /// interactive terminal; nil for the other events.
    public var progressLine: String? {
        guard case .started(let index, let total, let spec) = self else { return nil }
        return "[\(index)/\(total)] \(spec.label) …"
    }

    /// The line of a case that ended, with its time and net peak or why it did not complete, or that was
    /// taken from an interrupted run's journal (`--resume`); nil for a start.
    public var endLine: String? {
        switch self {
        case .started: return nil
        case .finished(let index, let total, let result, let elapsed):
            let seconds = Units.fixed(Double(elapsed) / 1e9, decimals: 1)
            let outcome =
                result.completed.map { "peak \(Units.formatBytes($0.peakAllocatedNetBytes))" }
                ?? "\(result.status.rawValue): \(result.failureText ?? "")"
            return "[\(index)/\(total)] \(result.label) \(seconds) s, \(outcome)"
        case .resumed(let index, let total, let result):
            return "[\(index)/\(total)] \(result.label) finished before the interruption (resumed)"
        }
    }
}
