import HarnessModel

/// Why attribution could not be done (a record that cannot be read, a profile without a peak).
///
/// Symbolization problems do not stop attribution (see `SymbolsError`): they become diagnostics of the result.
public enum AttributionError: Error, CustomStringConvertible, Sendable, Hashable {
    /// A line of an agent record that does not follow the format (`docs: notes/agent-contract.md`).
    case malformedRecord(source: String, line: Int, message: String)
    /// The record's first line names a format this reader does not know.
    case unsupportedRecordVersion(source: String, version: String)
    /// The record stops before its `end` line: the process was stopped while writing it.
    case truncatedRecord(source: String, lines: Int)
    /// The record has no mark with this label, but the profile needs it.
    case missingMark(source: String, label: String, available: [String])

    public var description: String {
        switch self {
        case .malformedRecord(let source, let line, let message):
            return "\(source):\(line): \(message)"
        case .unsupportedRecordVersion(let source, let version):
            let problem =
                AgentFileHeader.problem(firstLine: version, expected: .record)
                ?? .notAnAgentFile(firstLine: version)
            return "\(source):1: \(problem)"
        case .truncatedRecord(let source, let lines):
            return
                "\(source):\(lines): the record ends without its 'end' line: the process was stopped while writing it "
                + "(killed, or out of disk space); rerun the case, or raise its memory limit or timeout if it was stopped"
        case .missingMark(let source, let label, let available):
            let marks = available.isEmpty ? "none" : available.joined(separator: ", ")
            return "\(source): no '\(label)' mark; the record has: \(marks). "
                + "The peak snapshot is taken only when stack sampling is on (MEMHARNESS_AGENT_STACK_SAMPLE_BYTES) and the peak grows past the snapshot step"
        }
    }
}
