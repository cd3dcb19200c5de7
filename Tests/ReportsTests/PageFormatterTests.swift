import Foundation
import HarnessModel
import Testing

@testable import Reports

/// report.js keeps a byte formatter of its own for what only the page computes (axis ticks, a sample under the
/// pointer, the sum of the frames a search matches, the differential tree of whichever two columns the reader
/// picks); its text must be `Value.text`'s, so a label on the page reads as the same figure in report.md.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/node"), "needs node"))
struct PageFormatterTests {
    static let node = "/usr/bin/node"

    /// report.js's function `name`, as written there.
    static func function(_ name: String, in script: String) throws -> String {
        let start = try #require(script.range(of: "  function \(name)("))
        let rest = script[start.lowerBound...]
        // A one-line function ends on its line; a longer one at its closing brace at the function's indent.
        let firstLine = try #require(rest.split(separator: "\n").first)
        if firstLine.hasSuffix("}") { return String(firstLine) }
        let end = try #require(rest.range(of: "\n  }\n"))
        return String(script[start.lowerBound..<end.upperBound])
    }

    @Test func reportJSFormatsBytesAsTheDocumentDoes() throws {
        let script = try String(
            contentsOf: PageDataSchemaTests.assets.appendingPathComponent("report.js"), encoding: .utf8)
        var values: [Int] = [0, 1, 999, 1023, 1024, 1025, 1536, 10_240, 1_048_575, 1_048_576, 5_767_168]
        values += [123_456_789, 1 << 40, 3 << 41, 7_340_032 + 5_243, 1_099_511_627_775]
        values += values.map { -$0 } + (0..<200).map { $0 * 52_429 + 17 }
        // What the page computes need not be whole bytes (an axis tick, a mean): fractions below and above a KiB.
        let fractions: [Double] = [0.5, 1.6, 999.5, 1023.7, 1535.5, 1_048_575.9, 5_767_168.25]
        let inputs = values.map(Double.init) + fractions + fractions.map { -$0 }
        let program =
            try Self.function("bytes", in: script) + "\n" + Self.function("signedBytes", in: script) + "\n"
            + "for (const v of \(inputs)) console.log(bytes(v) + '|' + signedBytes(v));\n"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.node)
        process.arguments = ["-e", program]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.count == inputs.count, "the probe printed every value: \(output)")
        for (value, line) in zip(inputs, lines) {
            let swift = Value.bytes(value).text + "|" + Value.signedBytes(value).text
            #expect(line == swift, "\(value)")
        }
    }
}
