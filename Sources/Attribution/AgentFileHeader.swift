/// The first line of every file the memharness agent writes: `memharness-agent-<kind> <version>`.
///
/// The agent's one writer (Sources/MemHarnessAgent/writer.c) puts it first in the sample stream, the record and heap
/// captures (a capture's binary sections follow its line). Each reader names the kind it expects and checks it here, so
/// a file of another kind, of another version, or not of the agent at all is a clear error, never garbage.
public struct AgentFileHeader: Sendable, Hashable {
    /// What the file holds.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The sampler thread's stream of jemalloc figures (`s` lines, then `x` and the exit status).
        case samples
        /// The record: modules, sampled stacks, marks of the live bytes per stack, exact counts.
        case record
        /// A heap capture: every live block, pointer and root, binary after the line.
        case capture

        /// The version of this kind this memharness reads (the agent built with it writes it).
        public var supportedVersion: Int {
            switch self {
            case .samples: 1
            case .record: 1
            // 2: the shared first line (version 1 began with the magic `MHHEAP01`) and a stack id for every block.
            case .capture: 2
            }
        }

        /// The header line of this kind at its supported version, without the newline.
        public var line: String { "\(AgentFileHeader.prefix)\(rawValue) \(supportedVersion)" }
    }

    /// Why a first line is not the one a reader expects.
    public enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// Not a file of the agent (the first line as read, shortened).
        case notAnAgentFile(firstLine: String)
        /// A file of the agent, of another kind.
        case otherKind(found: String, expected: Kind)
        /// The expected kind, at a version this memharness does not read.
        case unsupportedVersion(kind: Kind, found: String)

        public var description: String {
            switch self {
            case .notAnAgentFile(let firstLine):
                return "not a file of the memharness agent: its first line is '\(firstLine)'"
            case .otherKind(let found, let expected):
                return "a memharness agent \(found) file, not its \(expected.rawValue) (expected '\(expected.line)'): "
                    + "pass the \(expected.rawValue) the agent wrote"
            case .unsupportedVersion(let kind, let found):
                return
                    "a memharness agent \(kind.rawValue) of version \(found) (expected '\(kind.line)'): use the agent "
                    + "built with this memharness (swift build --product memharness-agent), or a memharness as new as "
                    + "the agent"
            }
        }
    }

    /// The prefix every agent file's first line starts with.
    public static let prefix = "memharness-agent-"
    /// How a capture of version 1 began (before the shared first line).
    static let captureVersion1Magic = "MHHEAP01"

    public var kind: Kind
    public var version: Int

    /// Checks a first line (without its newline) against the kind a reader expects: nil when it is that kind at its
    /// supported version, else why not.
    public static func problem(firstLine: some StringProtocol, expected: Kind) -> Problem? {
        if expected == .capture, firstLine.hasPrefix(captureVersion1Magic) {
            return .unsupportedVersion(kind: .capture, found: "1")
        }
        let shown = String(firstLine.prefix(60).map { $0.isASCII && !$0.isNewline ? $0 : "?" })
        guard firstLine.hasPrefix(prefix) else { return .notAnAgentFile(firstLine: shown) }
        let fields = firstLine.dropFirst(prefix.count).split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 2 else { return .notAnAgentFile(firstLine: shown) }
        guard fields[0] == expected.rawValue else { return .otherKind(found: String(fields[0]), expected: expected) }
        guard Int(fields[1]) == expected.supportedVersion else {
            return .unsupportedVersion(kind: expected, found: String(fields[1]))
        }
        return nil
    }

    /// The first line of `bytes` (up to its newline, at most 64 bytes) checked against `expected`: the number of bytes
    /// the line takes with its newline, or why it is not the expected header.
    public static func check(_ bytes: some Collection<UInt8>, expected: Kind) -> Result<Int, Problem> {
        let head = bytes.prefix(64)
        guard let newline = head.firstIndex(of: UInt8(ascii: "\n")) else {
            let line = String(decoding: head, as: UTF8.self)
            return .failure(problem(firstLine: line, expected: expected) ?? .notAnAgentFile(firstLine: line))
        }
        let line = String(decoding: head[head.startIndex..<newline], as: UTF8.self)
        if let problem = problem(firstLine: line, expected: expected) { return .failure(problem) }
        return .success(head.distance(from: head.startIndex, to: newline) + 1)
    }
}
