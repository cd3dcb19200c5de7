import HarnessModel

/// Why attribution could not be done (a record that cannot be read, a profile without a peak).
///
/// Symbolization problems do not stop attribution: a tool's error is caught, the next tool is
/// asked, a frame that no tool can name becomes `module+0xoffset`, and the error's text goes into
/// the diagnostics of the result.
public enum AttributionError: Error, CustomStringConvertible, Sendable, Hashable {
    /// A line of an agent record that does not follow the format (`docs: notes/agent-contract.md`).
    case malformedRecord(source: String, line: Int, message: String)
    /// The record's first line names a format this reader does not know.
    case unsupportedRecordVersion(source: String, version: String)
    /// The record stops before its `end` line: the process was stopped while writing it.
    case truncatedRecord(source: String, lines: Int)
    /// The record has no mark with this label, but the profile needs it.
    case missingMark(source: String, label: String, available: [String])
    /// A symbolizing tool (llvm-symbolizer, addr2line, swift-demangle) could not be started.
    case toolCouldNotStart(executable: String, reason: String)
    /// A tool ran past its bound and was killed.
    case toolTimedOut(executable: String, after: Duration)
    /// Waiting for a tool failed; it was killed.
    case toolCouldNotBeWaitedFor(executable: String, reason: String)
    /// A tool exited with a failure status or was killed by a signal.
    case toolFailed(executable: String, termination: TerminationStatus, stderr: String)
    /// A tool printed something that is not its answer to the input.
    case toolOutputUnreadable(executable: String, reason: String)

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
        case .toolCouldNotStart(let executable, let reason):
            return
                "could not start \(executable): \(reason); install it, or point MEMHARNESS_LLVM_SYMBOLIZER / MEMHARNESS_ADDR2LINE / MEMHARNESS_SWIFT_DEMANGLE at it"
        case .toolTimedOut(let executable, let after):
            return
                "\(executable) did not finish within \(after) and was stopped; the next tool is tried, or frames are named module+0xoffset"
        case .toolCouldNotBeWaitedFor(let executable, let reason):
            return "could not wait for \(executable): \(reason); it was stopped, and the next tool is tried"
        case .toolFailed(let executable, let termination, let stderr):
            let ending: String
            switch termination {
            case .exited(let status): ending = "exited with status \(status)"
            case .signaled(let signal): ending = "was killed by signal \(signal)"
            }
            return "\(executable) \(ending)" + (stderr.isEmpty ? "" : ": \(stderr)")
        case .toolOutputUnreadable(let executable, let reason):
            return "\(executable) printed output that could not be read (\(reason)); is it the tool its name says?"
        case .missingMark(let source, let label, let available):
            let marks = available.isEmpty ? "none" : available.joined(separator: ", ")
            return "\(source): no '\(label)' mark; the record has: \(marks). "
                + "The peak snapshot is taken only when stack sampling is on (MEMHARNESS_AGENT_STACK_SAMPLE_BYTES) and the peak grows past the snapshot step"
        }
    }
}
