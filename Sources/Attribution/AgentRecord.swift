import Symbols

/// What the memharness agent wrote about one process: modules, sampled allocation stacks, and
/// labelled marks of the live bytes per stack (the format of `notes/agent-contract.md`, version 1).
///
/// A faithful copy of the record: addresses are raw return addresses, nothing is symbolized,
/// nothing is netted against the baseline. `AllocationProfile` is what a reader wants; this is
/// the input it is built from.
public struct AgentRecord: Sendable, Hashable, Codable {
    /// One sampled allocation stack (`stack id address...`).
    public struct Stack: Sendable, Hashable, Codable {
        /// The agent's id of the stack, unique in the record.
        public var id: Int
        /// Return addresses, **innermost first**: the first is the return address in malloc's caller.
        public var returnAddresses: [UInt64]
        /// True when the stack was deeper than the agent's frame limit (a `truncated id` line).
        public var isTruncated: Bool

        public init(id: Int, returnAddresses: [UInt64], isTruncated: Bool = false) {
            self.id = id
            self.returnAddresses = returnAddresses
            self.isTruncated = isTruncated
        }
    }

    /// Live bytes and blocks of one stack at a mark (`live stackId liveBytes liveCount`).
    public struct Live: Sendable, Hashable, Codable {
        /// The `Stack.id` of the stack.
        public var stackID: Int
        /// Estimated live bytes: the sum of the weights of the sampled blocks still live, size-class bytes.
        public var liveBytes: Int
        /// Estimated live blocks.
        public var liveCount: Int

        public init(stackID: Int, liveBytes: Int, liveCount: Int) {
            self.stackID = stackID
            self.liveBytes = liveBytes
            self.liveCount = liveCount
        }
    }

    /// A labelled copy of the live set per stack (`mark label timeNs levelBytes` and its `live` lines).
    public struct Mark: Sendable, Hashable, Codable {
        /// `baseline`, `peak`, `end`, `iteration.<phase>.<k>`, or another label the harness chose.
        public var label: String
        /// When the mark was taken, nanoseconds since the record's origin.
        public var timeNanoseconds: Int64
        /// The peak signal when the mark was taken, bytes.
        public var levelBytes: Int
        /// Live bytes per stack, in record order.
        public var live: [Live]

        public init(label: String, timeNanoseconds: Int64, levelBytes: Int, live: [Live]) {
            self.label = label
            self.timeNanoseconds = timeNanoseconds
            self.levelBytes = levelBytes
            self.live = live
        }
    }

    /// Exact counts (`exact baselineLiveBytes peakLiveBytes allocationCalls`), only in exact mode.
    public struct Exact: Sendable, Hashable, Codable {
        /// Exact live bytes at the baseline (`restart_peak_snapshot`, or at load), bytes.
        public var baselineLiveBytes: Int
        /// Exact high-water mark of the live bytes, bytes.
        public var peakLiveBytes: Int
        /// Allocating calls counted.
        public var allocationCalls: Int

        public init(baselineLiveBytes: Int, peakLiveBytes: Int, allocationCalls: Int) {
            self.baselineLiveBytes = baselineLiveBytes
            self.peakLiveBytes = peakLiveBytes
            self.allocationCalls = allocationCalls
        }
    }

    /// The format version of the first line.
    public var version: Int
    /// The process the record is of.
    public var processID: Int?
    /// Path of the executable.
    public var program: String?
    /// Mean sampling interval of the stacks, bytes; 0 when stack sampling was off.
    public var stackSampleBytes: Int
    /// Exact counts, nil unless the agent counted every allocation.
    public var exact: Exact?
    /// Executable segments, in record order.
    public var modules: [LoadedModule]
    /// Stacks, in record order.
    public var stacks: [Stack]
    /// Marks, in record order (a label written twice appears twice).
    public var marks: [Mark]

    public init(
        version: Int = 1, processID: Int? = nil, program: String? = nil, stackSampleBytes: Int = 0, exact: Exact? = nil,
        modules: [LoadedModule] = [], stacks: [Stack] = [], marks: [Mark] = []
    ) {
        self.version = version
        self.processID = processID
        self.program = program
        self.stackSampleBytes = stackSampleBytes
        self.exact = exact
        self.modules = modules
        self.stacks = stacks
        self.marks = marks
    }

    /// The last mark with this label (the agent retakes `peak` as the peak grows; the last is the highest).
    public func mark(_ label: String) -> Mark? {
        marks.last { $0.label == label }
    }

    /// The module segment holding `address`, nil when none does.
    public func module(containing address: UInt64) -> LoadedModule? {
        ModuleMap(modules).module(containing: address)
    }
}

extension AgentRecord {
    /// The format version this reader understands (the first line is `memharness-agent-record 1`).
    public static let supportedVersion = AgentFileHeader.Kind.record.supportedVersion

    /// Reads a record from its text; `source` names it in errors (a path).
    ///
    /// Unknown line kinds are skipped (newer agents may add some); blank lines too. A `live` line
    /// must follow a `mark` and name a stack written before it; a record must end with `end`.
    public static func parse(_ text: String, source: String = "record") throws(AttributionError) -> AgentRecord {
        var parser = Parser(source: source)
        // "\r\n" is one Character in Swift: both line ends are separators.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            try parser.read(line)
        }
        return try parser.finish()
    }

    /// Reads a record line by line: the record so far, and where in the text the reader is.
    private struct Parser {
        let source: String
        var record = AgentRecord()
        /// Where each stack id read so far is in `record.stacks`.
        var stackIndex: [Int: Int] = [:]
        /// The mark whose `live` lines are being read; it joins the record at the next `mark` or `end`.
        var currentMark: Mark?
        var sawHeader = false
        var sawEnd = false
        var lineNumber = 0
        var lastContentLine = 0

        /// Reads the next line of the text; a blank one only counts for the line numbers.
        mutating func read(_ line: Substring) throws(AttributionError) {
            lineNumber += 1
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let kind = fields.first else { return }
            lastContentLine = lineNumber
            guard sawHeader else {
                try readHeader(line)
                return
            }
            if sawEnd { throw fail("'\(kind)' after the 'end' line; a record ends with 'end'") }
            try readBody(kind, fields, line: line)
        }

        /// The record, once every line is read.
        func finish() throws(AttributionError) -> AgentRecord {
            guard sawHeader else { throw .unsupportedRecordVersion(source: source, version: "") }
            guard sawEnd else { throw .truncatedRecord(source: source, lines: lastContentLine) }
            return record
        }

        /// The first line with content: the agent's shared header, of a record, at the one version this reader knows.
        private mutating func readHeader(_ line: Substring) throws(AttributionError) {
            guard AgentFileHeader.problem(firstLine: line, expected: .record) == nil else {
                throw .unsupportedRecordVersion(source: source, version: String(line))
            }
            record.version = AgentRecord.supportedVersion
            sawHeader = true
        }

        private mutating func readBody(_ kind: Substring, _ fields: [Substring], line: Substring)
            throws(AttributionError)
        {
            switch kind {
            case "pid":
                try expectFields(fields, 2, "pid PROCESS_ID")
                record.processID = try count(fields[1], "process id")
            case "program":
                try expectFields(fields, 2, "program PATH")
                record.program = rest(of: line, after: 1)
            case "stackSampleBytes":
                try expectFields(fields, 2, "stackSampleBytes MEAN_BYTES")
                record.stackSampleBytes = try count(fields[1], "mean sampling interval")
            case "exact":
                record.exact = try exact(fields)
            case "module":
                record.modules.append(try module(fields, line: line))
            case "stack":
                try readStack(fields)
            case "truncated":
                try readTruncated(fields)
            case "mark":
                try readMark(fields)
            case "live":
                try readLive(fields)
            case "end":
                closeMark()
                sawEnd = true
            default:
                // Forward compatibility: newer agents may write kinds this reader does not know.
                return
            }
        }

        private func exact(_ fields: [Substring]) throws(AttributionError) -> Exact {
            try expectFields(fields, 4, "exact BASELINE_LIVE_BYTES PEAK_LIVE_BYTES ALLOCATION_CALLS")
            return Exact(
                baselineLiveBytes: try count(fields[1], "baseline live bytes"),
                peakLiveBytes: try count(fields[2], "peak live bytes"),
                allocationCalls: try count(fields[3], "allocation calls"))
        }

        private func module(_ fields: [Substring], line: Substring) throws(AttributionError) -> LoadedModule {
            try expectFields(fields, 5, "module LOAD_BIAS START END PATH")
            let module = LoadedModule(
                loadBias: try address(fields[1], "load bias"), start: try address(fields[2], "start"),
                end: try address(fields[3], "end"), path: rest(of: line, after: 4))
            guard module.start < module.end else {
                throw fail("module segment start \(fields[2]) is not below its end \(fields[3])")
            }
            return module
        }

        private mutating func readStack(_ fields: [Substring]) throws(AttributionError) {
            try expectFields(fields, 3, "stack ID RETURN_ADDRESS...")
            let id = try count(fields[1], "stack id")
            guard stackIndex[id] == nil else { throw fail("stack \(id) is written twice; stack ids are unique") }
            var addresses: [UInt64] = []
            addresses.reserveCapacity(fields.count - 2)
            for field in fields.dropFirst(2) { addresses.append(try address(field, "return address")) }
            stackIndex[id] = record.stacks.count
            record.stacks.append(Stack(id: id, returnAddresses: addresses))
        }

        private mutating func readTruncated(_ fields: [Substring]) throws(AttributionError) {
            try expectFields(fields, 2, "truncated STACK_ID")
            let id = try count(fields[1], "stack id")
            guard let index = stackIndex[id] else {
                throw fail("truncated names stack \(id), which is not written before it")
            }
            record.stacks[index].isTruncated = true
        }

        private mutating func readMark(_ fields: [Substring]) throws(AttributionError) {
            try expectFields(fields, 4, "mark LABEL TIME_NS LEVEL_BYTES")
            closeMark()
            guard let time = Int64(fields[2]) else {
                throw fail("mark time '\(fields[2])' is not a whole number of nanoseconds")
            }
            currentMark = Mark(
                label: String(fields[1]), timeNanoseconds: time,
                levelBytes: try integer(fields[3], "mark level"), live: [])
        }

        private mutating func readLive(_ fields: [Substring]) throws(AttributionError) {
            try expectFields(fields, 4, "live STACK_ID LIVE_BYTES LIVE_COUNT")
            guard currentMark != nil else {
                throw fail("'live' before any 'mark'; live lines belong to the mark above them")
            }
            let id = try count(fields[1], "stack id")
            guard stackIndex[id] != nil else {
                throw fail(
                    "live names stack \(id), which is not written before it; stacks come before the marks that use them"
                )
            }
            let live = Live(
                stackID: id, liveBytes: try count(fields[2], "live bytes"),
                liveCount: try count(fields[3], "live count"))
            currentMark?.live.append(live)
        }

        private mutating func closeMark() {
            if let mark = currentMark { record.marks.append(mark) }
            currentMark = nil
        }

        private func fail(_ message: String) -> AttributionError {
            .malformedRecord(source: source, line: lineNumber, message: message)
        }

        private func integer(_ text: Substring, _ what: String) throws(AttributionError) -> Int {
            guard let value = Int(text) else { throw fail("\(what) '\(text)' is not a whole number") }
            return value
        }

        private func count(_ text: Substring, _ what: String) throws(AttributionError) -> Int {
            let value = try integer(text, what)
            guard value >= 0 else { throw fail("\(what) '\(text)' is negative") }
            return value
        }

        private func address(_ text: Substring, _ what: String) throws(AttributionError) -> UInt64 {
            guard text.hasPrefix("0x") || text.hasPrefix("0X"), let value = UInt64(text.dropFirst(2), radix: 16)
            else {
                throw fail("\(what) '\(text)' is not a hexadecimal address like 0x7f3a12c0")
            }
            return value
        }

        private func expectFields(_ fields: [Substring], _ count: Int, _ form: String) throws(AttributionError) {
            guard fields.count >= count else {
                throw fail("'\(fields[0])' needs \(count - 1) field\(count == 2 ? "" : "s"): \(form)")
            }
        }

        /// The text after the first `skip` fields, spaces kept (paths may contain spaces).
        private func rest(of line: Substring, after skip: Int) -> String {
            var remainder = line[...]
            for _ in 0..<skip {
                remainder = remainder.drop { $0 != " " }.drop { $0 == " " }
            }
            return String(remainder)
        }
    }
}
