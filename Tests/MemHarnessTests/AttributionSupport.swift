import FileIO
import Foundation
import HarnessModel
import Reports
import TestSupport
import Testing

/// Runs the built binaries for the attribution tests and reads what they wrote. Output goes to files, so a
/// chatty child never blocks on a pipe, and every wait is bounded: a hung child is killed and the test fails.
struct AttributionHarness {
    static let agentProbe = CommandLineTests.binary(named: "agent-probe")
    static let agent = CommandLineTests.binary(named: "libmemharness-agent.so")

    /// What to build when a binary is missing; nil when all are there.
    static var missingPieces: String? {
        let missing = [
            (CommandLineTests.binary, "swift build --product memharness"),
            (agent, "swift build --product memharness-agent"),
            (agentProbe, "swift build --product agent-probe"),
        ].filter { !FileManager.default.fileExists(atPath: $0.0) }
        return missing.isEmpty ? nil : "missing: " + missing.map { "\($0.0) (\($0.1))" }.joined(separator: ", ")
    }

    /// A scratch folder for one test; removed by `cleanUp()`.
    let directory: String

    init() throws {
        try #require(Self.missingPieces == nil, "\(Self.missingPieces ?? "")")
        directory = try CommandLineTests().temporaryDirectory()
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: directory) }

    /// `memharness` with `arguments`; waits at most `timeout`.
    func memharness(_ arguments: [String], timeout: Duration = .seconds(240)) throws -> ChildRun {
        try run(CommandLineTests.binary, arguments, timeout: timeout)
    }

    /// Writes `yaml` as a scenario file and returns its path.
    func scenario(_ yaml: String, name: String) throws -> String {
        let path = "\(directory)/\(name).yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs `executable` and waits at most `timeout`; a child still running then is killed (`timedOut`).
    func run(_ executable: String, _ arguments: [String], timeout: Duration) throws -> ChildRun {
        var environment = ProcessInfo.processInfo.environment
        // A test run inside GitHub Actions must not leak its own settings into the binary under test.
        environment["GITHUB_ACTIONS"] = nil
        environment["GITHUB_STEP_SUMMARY"] = nil
        return try ChildRun.run(executable, arguments, environment: environment, timeout: timeout)
    }

    /// Every file of a report folder, relative to it, sorted.
    static func files(in folder: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder)
        var files: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: "\(folder)/\(path)", isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files.append(path)
            }
        }
        return files.sorted()
    }

    /// The decompressed bytes of a gzip file (`gzip -dc`).
    func gunzip(_ path: String) throws -> [UInt8] {
        let output = "\(directory)/gunzipped-\(UUID().uuidString)"
        let outcome = try run(
            "/bin/sh", ["-c", "gzip -dc \"$0\" > \"$1\"", path, output], timeout: .seconds(30))
        try #require(outcome.status == 0 && !outcome.timedOut, "gzip -dc \(path): \(outcome.stderr)")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }
}

/// Mangled Swift symbols in text: `$s`, `_$s`, `$S` (Swift 4) or `$e` (Embedded Swift), then a mangled body.
enum MangledNames {
    static func find(in text: String) -> [String] {
        var found: [String] = []
        let characters = Array(text)
        for index in characters.indices where characters[index] == "$" && index + 2 < characters.count {
            let kind = characters[index + 1]
            let next = characters[index + 2]
            guard kind == "s" || kind == "S" || kind == "e", next.isNumber || next.isLetter || next == "_" else {
                continue
            }
            // `$s` inside a word (`costs$sum`) is not a symbol's start.
            if index > 0, characters[index - 1].isLetter || characters[index - 1].isNumber { continue }
            found.append(String(characters[index..<min(index + 40, characters.count)]))
        }
        return found
    }
}

/// The parts of pprof's `Profile` message the tests check, read with a protobuf field walker.
struct PprofProfileReading {
    /// `string_table`, in order.
    var strings: [String] = []
    /// `sample_type` as (type, unit) string indices.
    var sampleTypes: [(type: Int, unit: Int)] = []
    /// Per sample: location ids (leaf first) and values.
    var samples: [(locations: [UInt64], values: [UInt64])] = []
    /// Location id -> function ids of its lines.
    var locations: [UInt64: [UInt64]] = [:]
    /// Function id -> name's string index.
    var functionNames: [UInt64: Int] = [:]

    enum Field {
        case number(UInt64)
        case bytes(ArraySlice<UInt8>)
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    init(_ bytes: [UInt8]) throws {
        for (number, field) in try Self.fields(bytes[...]) {
            switch (number, field) {
            case (1, .bytes(let message)):
                let values = try Self.fields(message)
                sampleTypes.append((Self.int(values, 1), Self.int(values, 2)))
            case (2, .bytes(let message)):
                let values = try Self.fields(message)
                samples.append((try Self.repeated(values, 1), try Self.repeated(values, 2)))
            case (4, .bytes(let message)):
                let values = try Self.fields(message)
                let lines = try values.filter { $0.0 == 4 }.compactMap { line -> UInt64? in
                    guard case .bytes(let body) = line.1 else { return nil }
                    return UInt64(Self.int(try Self.fields(body), 1))
                }
                locations[UInt64(Self.int(values, 1))] = lines
            case (5, .bytes(let message)):
                let values = try Self.fields(message)
                functionNames[UInt64(Self.int(values, 1))] = Self.int(values, 2)
            case (6, .bytes(let text)):
                strings.append(String(decoding: text, as: UTF8.self))
            default:
                continue
            }
        }
    }

    /// The name of the function of each location of a sample, leaf first.
    func functions(of sample: (locations: [UInt64], values: [UInt64])) -> [String] {
        sample.locations.flatMap { locations[$0] ?? [] }.compactMap { functionNames[$0] }.map {
            strings.indices.contains($0) ? strings[$0] : "<bad index \($0)>"
        }
    }

    static func varint(_ bytes: ArraySlice<UInt8>, _ index: inout Int) throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.endIndex, shift < 64 {
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        throw Malformed(description: "a varint runs past its message")
    }

    static func fields(_ bytes: ArraySlice<UInt8>) throws -> [(Int, Field)] {
        var index = bytes.startIndex
        var out: [(Int, Field)] = []
        while index < bytes.endIndex {
            let key = try varint(bytes, &index)
            switch key & 7 {
            case 0: out.append((Int(key >> 3), .number(try varint(bytes, &index))))
            case 2:
                let length = Int(try varint(bytes, &index))
                guard length <= bytes.endIndex - index else {
                    throw Malformed(description: "a field runs past its message")
                }
                out.append((Int(key >> 3), .bytes(bytes[index..<index + length])))
                index += length
            case 1: index += 8
            case 5: index += 4
            default: throw Malformed(description: "wire type \(key & 7)")
            }
        }
        return out
    }

    static func int(_ values: [(Int, Field)], _ number: Int) -> Int {
        for (field, value) in values where field == number { if case .number(let n) = value { return Int(n) } }
        return 0
    }

    /// A repeated integer field, packed or not.
    static func repeated(_ values: [(Int, Field)], _ number: Int) throws -> [UInt64] {
        var out: [UInt64] = []
        for (field, value) in values where field == number {
            switch value {
            case .number(let n): out.append(n)
            case .bytes(let packed):
                var index = packed.startIndex
                while index < packed.endIndex { out.append(try varint(packed, &index)) }
            }
        }
        return out
    }
}
