import Attribution
import Foundation

/// A running program's sample stream (`samples.<pid>`), read as it grows: each `refresh` parses only the lines written
/// since the last one, so waiting at every round's boundary costs the new lines, not the whole stream again.
final class SampleStreamTail {
    let path: String
    /// The stream's lines parsed so far.
    private(set) var samples = ProgramSamples()
    /// Bytes of the file read so far, and the start of a line still being written (kept until its newline comes).
    private var offset: UInt64 = 0
    private var pending = Data()
    private var headerRead = false

    init(path: String) { self.path = path }

    /// Reads what the agent appended since the last call; false while there is no stream (or its first line is not
    /// the agent's samples header this memharness reads, which `ProgramSamples.read` reports at the case's end).
    func refresh() -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? file.close() }
        guard (try? file.seek(toOffset: offset)) != nil, let data = try? file.readToEnd() else { return headerRead }
        offset += UInt64(data.count)
        pending.append(data)
        guard let last = pending.lastIndex(of: UInt8(ascii: "\n")) else { return headerRead }
        let text = String(decoding: pending[pending.startIndex..<last], as: UTF8.self)
        pending = Data(pending[(last + 1)...])
        for line in text.split(separator: "\n") {
            guard headerRead else {
                guard AgentFileHeader.problem(firstLine: line, expected: .samples) == nil else { return false }
                headerRead = true
                continue
            }
            samples.add(line: line)
        }
        return headerRead
    }
}
