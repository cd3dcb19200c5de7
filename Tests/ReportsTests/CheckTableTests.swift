import FileIO
import HarnessModel
import Testing

@testable import Reports

/// The check table on the terminal stays within its width, its failure messages wrapped, never cut.
struct CheckTableTests {
    static let longFile =
        "/home/runner/work/some-organisation/a-rather-long-repository-name/Scenarios/nested/folders/gate-absolute.yaml"

    static func check(_ strategy: String, passed: Bool, message: String) -> CheckResult {
        CheckResult(
            kind: .threshold, scenario: "gate-absolute", strategy: strategy, name: "\(strategy).peakAllocated <= 1MiB",
            passed: passed, actual: "4.00 MiB", limit: "1.00 MiB", margin: passed ? "+10.0%" : "-300.0%",
            message: message, file: longFile, line: 16, column: 20)
    }

    /// A failure message whose words each fit a line of 50 columns.
    static let failure =
        "hold-large.peakAllocated = 4.00 MiB (median of 3, spread ±0.1%) breaks `hold-large.peakAllocated <= 1MiB` "
        + "(limit 1.00 MiB, off by -3.00 MiB, -300.0%); see the `gate-absolute` section of report.md and "
        + "Scenarios/nested/gate-absolute.yaml:16"

    @Test(arguments: [100, 80, 60, 50])
    func everyLineFitsTheWidthAndEveryFailureMessageIsWhole(width: Int) {
        let checks = [
            Self.check("hold-large", passed: false, message: Self.failure),
            Self.check("churn", passed: true, message: "fine"),
            Self.check(String(repeating: "a-very-long-strategy-name-", count: 3), passed: false, message: "short"),
        ]
        let lines = CheckOutputs.terminalTable(checks, width: width).split(
            separator: "\n", omittingEmptySubsequences: false)
        #expect(Self.failure.count > width, "the message needs wrapping, or the test shows nothing")
        for line in lines { #expect(line.count <= width, "\(line.count) columns: \(line)") }
        #expect(lines.contains("1 passed, 2 failed"))
        // The failures follow the counts; joined again at their breaks they are the messages, word for word.
        let counts = lines.firstIndex(of: "1 passed, 2 failed") ?? lines.endIndex
        let failures = lines[(counts + 1)...].filter { !$0.isEmpty }.joined(separator: "\n")
            .replacingOccurrences(of: "\n      ", with: " ")
        #expect(failures == "FAIL: \(Self.failure)\nFAIL: short")
    }

    @Test func aWordLongerThanALineIsCutWhereTheLineEndsAndNothingIsLost() {
        let message = "see \(Self.longFile):16"
        #expect(Self.longFile.count > 94, "longer than a line after the indent")
        let lines = CheckOutputs.terminalTable([Self.check("x", passed: false, message: message)], width: 100)
            .split(separator: "\n")
        for line in lines { #expect(line.count <= 100, "\(line.count) columns: \(line)") }
        let failure = lines.drop { !$0.hasPrefix("FAIL: ") }.joined(separator: "\n")
        #expect(failure.filter { !$0.isWhitespace } == "FAIL: \(message)".filter { !$0.isWhitespace })
    }

    @Test func aTableThatFitsKeepsItsColumnsAndShortMessagesStayOnOneLine() {
        let checks = [Self.check("churn", passed: true, message: "fine"), Self.check("x", passed: false, message: "m")]
        let text = CheckOutputs.terminalTable(checks, width: 100)
        #expect(text.hasPrefix("      check"))
        #expect(text.contains("\nFAIL  gate-absolute · x.peakAllocated <= 1MiB"))
        #expect(text.hasSuffix("\n1 passed, 1 failed\nFAIL: m\n"))
    }

    @Test func withoutATerminalNothingIsCutOrWrapped() {
        let name = String(repeating: "a-very-long-strategy-name-", count: 5)
        let checks = [
            Self.check(name, passed: false, message: Self.failure), Self.check("churn", passed: true, message: "fine"),
        ]
        let text = CheckOutputs.terminalTable(checks, width: nil)
        #expect(!text.contains("…"), "\(text)")
        #expect(text.hasPrefix("      check"), "the table keeps its columns: \(text)")
        #expect(text.contains("gate-absolute · \(name).peakAllocated <= 1MiB"))
        #expect(text.contains("margin"))
        #expect(text.hasSuffix("\nFAIL: \(Self.failure)\n"), "the message on one line: \(text)")
        // With a width the same checks are cut: what a terminal gets.
        #expect(CheckOutputs.terminalTable(checks, width: 100).contains("…"))
    }

    @Test func wrapsAtTheLastSpaceThatFitsAndCutsAWordLongerThanALine() {
        #expect(CheckOutputs.wrapped("aaa bbb ccc", to: 7, indent: 2) == ["aaa bbb", "  ccc"])
        #expect(CheckOutputs.wrapped("aaa bbb ccc", to: 6, indent: 2) == ["aaa", "  bbb", "  ccc"])
        #expect(CheckOutputs.wrapped("abcdefghij", to: 4, indent: 1) == ["abcd", " efg", " hij"])
        #expect(CheckOutputs.wrapped("short", to: 10, indent: 6) == ["short"])
        #expect(CheckOutputs.wrapped("one\ntwo words", to: 6, indent: 1) == ["one", " two", " words"])
        // No room after the indent: the lines as they are, rather than a loop that cannot make progress.
        #expect(CheckOutputs.wrapped("aaa bbb", to: 2, indent: 2) == ["aaa bbb"])
    }
}
