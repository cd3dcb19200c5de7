import Foundation

/// A parsed agent record (notes/agent-contract.md), strict enough that a malformed line fails the test
/// that reads it: unknown line kinds are skipped, as the contract asks of readers, known ones must parse.
struct AgentRecord {
    struct Module {
        var loadBias: UInt64
        var start: UInt64
        var end: UInt64
        var path: String
    }

    struct Row {
        var liveBytes: Int
        var liveCount: Int
    }

    struct Mark {
        var label: String
        var timeNanoseconds: Int
        var levelBytes: Int
        var rows: [Int: Row] = [:]
    }

    struct Exact {
        var baselineLiveBytes: Int
        var peakLiveBytes: Int
        var allocationCalls: Int
    }

    struct ParseError: Error, CustomStringConvertible {
        var line: Int
        var text: String
        var description: String { "record line \(line): cannot parse '\(text)'" }
    }

    var pid = 0
    var program = ""
    var stackSampleBytes = 0
    var exact: Exact?
    var modules: [Module] = []
    var stacks: [Int: [UInt64]] = [:]
    var truncated: Set<Int> = []
    var marks: [Mark] = []
    var ended = false

    init(contentsOf path: String) throws {
        try self.init(text: String(contentsOfFile: path, encoding: .utf8))
    }

    init(text: String) throws {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == "memharness-agent-record 1" else {
            throw ParseError(line: 1, text: String(lines.first ?? ""))
        }
        for (index, line) in lines.enumerated().dropFirst() where !line.isEmpty {
            let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            let fail = ParseError(line: index + 1, text: String(line))
            func int(_ i: Int) throws -> Int {
                guard i < words.count, let value = Int(words[i]) else { throw fail }
                return value
            }
            func hex(_ word: String) throws -> UInt64 {
                guard word.hasPrefix("0x"), let value = UInt64(word.dropFirst(2), radix: 16) else { throw fail }
                return value
            }
            switch words[0] {
            case "pid": pid = try int(1)
            case "program": program = words.dropFirst().joined(separator: " ")
            case "stackSampleBytes": stackSampleBytes = try int(1)
            case "exact":
                exact = Exact(baselineLiveBytes: try int(1), peakLiveBytes: try int(2), allocationCalls: try int(3))
            case "module":
                guard words.count >= 5 else { throw fail }
                modules.append(
                    Module(
                        loadBias: try hex(words[1]), start: try hex(words[2]), end: try hex(words[3]),
                        path: words.dropFirst(4).joined(separator: " ")))
            case "stack": stacks[try int(1)] = try words.dropFirst(2).map(hex)
            case "truncated": truncated.insert(try int(1))
            case "mark":
                guard words.count == 4 else { throw fail }
                marks.append(Mark(label: words[1], timeNanoseconds: try int(2), levelBytes: try int(3)))
            case "live":
                guard !marks.isEmpty, words.count == 4 else { throw fail }
                let id = try int(1)
                guard stacks[id] != nil else { throw fail }  // stacks come before the marks that use them
                marks[marks.count - 1].rows[id] = Row(liveBytes: try int(2), liveCount: try int(3))
            case "end": ended = true
            default: continue
            }
        }
    }

    func mark(_ label: String) -> Mark? { marks.last { $0.label == label } }

    /// The module holding `address` (a return address minus 1, as symbolization does).
    func module(containing address: UInt64) -> Module? {
        modules.first { address >= $0.start && address < $0.end }
    }

    /// The probe function each frame of `stack` returns into, innermost first (nil outside the probe).
    func probeFunctions(stack: Int, symbols: ProbeSymbols, probePath: String) -> [String?] {
        let probe = URL(fileURLWithPath: probePath).resolvingSymlinksInPath().path
        return (stacks[stack] ?? []).map { returnAddress in
            guard let module = module(containing: returnAddress - 1),
                URL(fileURLWithPath: module.path).resolvingSymlinksInPath().path == probe
            else { return nil }
            return symbols.function(at: returnAddress - 1 - module.loadBias)
        }
    }

    /// The bytes a mark holds under stacks whose innermost probe frame is in `function`.
    func liveBytes(in mark: Mark, innermostProbeFunction function: String, symbols: ProbeSymbols, probePath: String)
        -> Int
    {
        mark.rows.filter { id, _ in
            probeFunctions(stack: id, symbols: symbols, probePath: probePath).compactMap { $0 }.first == function
        }.values.reduce(0) { $0 + $1.liveBytes }
    }
}

/// The sample stream (MEMHARNESS_AGENT_SAMPLES).
struct SampleStream {
    struct Sample {
        var timeNanoseconds: Int
        var allocated: Int
        var active: Int
        var resident: Int
        var mapped: Int
        var retained: Int
        var metadata: Int
        var rss: Int
        var nmalloc: Int
        /// The anonymous part of `rss`.
        var anonymous: Int
        /// With exact counting, the agent's live bytes, allocation calls and the bytes they handed out; -1 each
        /// without.
        var live: Int
        var calls: Int
        var allocatedTotal: Int
        /// With exact counting, the highest live bytes since the previous sample; -1 without.
        var high: Int
    }

    var header = ""
    /// The `a` line's allocator (`jemalloc` or `glibc`).
    var allocator: String?
    var samples: [Sample] = []
    var exit: (timeNanoseconds: Int, status: Int)?
    /// The `r` lines (the resident set explained): the point (`h` or `e`) and the 13 figures after it.
    var explained: [(point: String, figures: [Int])] = []
    var malformed: [String] = []

    init(contentsOf path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n")
        header = lines.first.map(String.init) ?? ""
        for line in lines.dropFirst() {
            let words = line.split(separator: " ").map(String.init)
            let numbers = words.dropFirst().compactMap { Int($0) }
            if words.first == "s", words.count == 15, numbers.count == 14 {
                samples.append(
                    Sample(
                        timeNanoseconds: numbers[0], allocated: numbers[1], active: numbers[2], resident: numbers[3],
                        mapped: numbers[4], retained: numbers[5], metadata: numbers[6], rss: numbers[7],
                        nmalloc: numbers[8], anonymous: numbers[9], live: numbers[10], calls: numbers[11],
                        allocatedTotal: numbers[12], high: numbers[13]))
            } else if words.first == "r", words.count == 15, ["h", "e"].contains(words[2]), numbers.count == 13 {
                explained.append((words[2], numbers))
            } else if words.first == "a", words.count == 2, ["jemalloc", "glibc"].contains(words[1]), allocator == nil {
                allocator = words[1]
            } else if words.first == "x", words.count == 3, numbers.count == 2 {
                exit = (numbers[0], numbers[1])
            } else {
                malformed.append(String(line))
            }
        }
    }
}
