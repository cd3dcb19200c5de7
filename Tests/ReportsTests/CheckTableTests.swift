import FileIO
import HarnessModel
import Testing

@testable import Reports

/// The check table on the terminal is the document's checks section laid out within its width: long cells wrapped
/// in their column, failure messages wrapped, nothing ever cut.
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
        #expect(lines.contains("1 passed, 2 failed."))
        // The failures follow the table; joined again at their breaks they are the messages, word for word.
        let table = lines.firstIndex { $0.hasPrefix("FAIL: ") } ?? lines.endIndex
        let failures = lines[table...].filter { !$0.isEmpty }.joined(separator: "\n")
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
        #expect(text.hasPrefix("Checks\n1 passed, 1 failed.\n\n         Scenario       Check"), "\(text)")
        #expect(text.contains("\n❌ FAIL  gate-absolute  x.peakAllocated <= 1MiB"), "\(text)")
        #expect(text.hasSuffix("\n\nFAIL: m\n"), "\(text)")
    }

    /// What the verdict of a leaking strategy looks like: one cell far wider than the rest.
    static func leak(_ strategy: String) -> CheckResult {
        CheckResult(
            kind: .leak, scenario: "heap-fixtures", strategy: strategy, name: "\(strategy): expected leak-free",
            passed: false,
            actual: "leaks (4000 blocks (7.90 MiB) no root reaches, in 2000 cycles, and 1 known leak suppressed "
                + "(1 block, 64 B))",
            limit: "expect leak-free", margin: "unexpected-leak", message: "\(strategy) leaks")
    }

    @Test func aLongCellGoesUnderItsRowAndTheOtherColumnsKeepTheirPlace() throws {
        let checks = [Self.leak("cycles"), Self.check("churn", passed: true, message: "fine")]
        for width in [Optional(100), nil] {
            let text = CheckOutputs.terminalTable(checks, width: width)
            let lines = text.split(separator: "\n").map(String.init)
            for line in lines { #expect(TerminalRenderer.displayWidth(line) <= width ?? 120, "\(line)") }
            // The row keeps its other cells; under it the verdict, after its header, wrapped and whole.
            let row = try #require(lines.firstIndex { $0.hasPrefix("❌ FAIL  heap-fixtures") })
            #expect(lines[row].contains("expect leak-free"), "\(text)")
            let under = lines[(row + 1)...].prefix { $0.hasPrefix("      ") }
            #expect(under.first?.hasPrefix("      Actual: leaks (4000 blocks") == true, "\(text)")
            let joined = under.map { $0.dropFirst(6) }.joined(separator: " ")
            #expect(joined.hasPrefix("Actual: \(checks[0].actual)"), "\(text)")
            // The short figure of the other row stays in the column, which is as wide as it.
            #expect(lines.contains { $0.hasPrefix("✅ PASS  gate-absolute") && $0.contains("4.00 MiB") })
            #expect(!text.contains("…"))
        }
    }

    @Test func aChecksNameStaysOnItsRowWhileOtherCellsGoUnder() throws {
        let checks = [Self.check("a-long-strategy-name", passed: false, message: "m"), Self.leak("cycles")]
        let text = CheckOutputs.terminalTable(checks, width: 100)
        let lines = text.split(separator: "\n").map(String.init)
        for line in lines { #expect(TerminalRenderer.displayWidth(line) <= 100, "\(line)") }
        // The probe first: the table did not fit whole, so some cell went under its row.
        #expect(lines.contains { $0.hasPrefix("      ") }, "\(text)")
        // Each row starts with its status, its scenario and its check: a reader finds the row by its name.
        #expect(lines.contains { $0.hasPrefix("❌ FAIL  gate-absolute  a-long-strategy-name.peakAllocated <= 1MiB") })
        #expect(lines.contains { $0.hasPrefix("❌ FAIL  heap-fixtures  cycles: expected leak-free") }, "\(text)")
    }

    @Test func withoutATerminalTheTableKeepsTo120ColumnsAndFailureMessagesStayWhole() {
        let name = String(repeating: "a-very-long-strategy-name-", count: 5)
        let checks = [
            Self.check(name, passed: false, message: Self.failure), Self.check("churn", passed: true, message: "fine"),
        ]
        let text = CheckOutputs.terminalTable(checks, width: nil)
        #expect(!text.contains("…"), "\(text)")
        #expect(text.contains("Scenario"), "the table keeps its columns: \(text)")
        #expect(text.filter { !$0.isWhitespace }.contains("\(name).peakAllocated<=1MiB"))
        #expect(text.contains("Margin"))
        #expect(text.hasSuffix("\nFAIL: \(Self.failure)\n"), "the message on one line: \(text)")
        for line in text.split(separator: "\n").dropLast() { #expect(line.count <= 120, "\(line)") }
    }

    @Test func aCellWiderThanTheRoomGoesUnderItsRow() {
        let long = "leaks (4000 blocks no root reaches)"
        let lines = TerminalRenderer.table(
            Table(
                columns: [.init("Name"), .init("Value", .number)],
                rows: [["a", "1"], ["b", Phrase(stringLiteral: long)]]),
            width: 20)
        #expect(
            lines == [
                "Name  Value", "a         1", "b", "      Value: leaks", "      (4000 blocks", "      no root",
                "      reaches)",
            ])
    }

    @Test func aTableWhoseHeadersDoNotFitHasARowPerParagraph() {
        let lines = TerminalRenderer.table(
            Table(columns: [.init("Alpha"), .init("Beta")], rows: [["one two three", "x"]]), width: 10)
        for line in lines { #expect(line.count <= 10, "\(line)") }
        #expect(lines.joined().filter { !$0.isWhitespace } == "Alphaonetwothree·Betax", "\(lines)")
    }

    @Test func wrapsAtTheLastSpaceThatFitsAndCutsAWordLongerThanALine() {
        #expect(TerminalRenderer.wrapped("aaa bbb ccc", to: 7, indent: 2) == ["aaa bbb", "  ccc"])
        #expect(TerminalRenderer.wrapped("aaa bbb ccc", to: 6, indent: 2) == ["aaa", "  bbb", "  ccc"])
        #expect(TerminalRenderer.wrapped("abcdefghij", to: 4, indent: 1) == ["abcd", " efg", " hij"])
        #expect(TerminalRenderer.wrapped("short", to: 10, indent: 6) == ["short"])
        #expect(TerminalRenderer.wrapped("one\ntwo words", to: 6, indent: 1) == ["one", " two", " words"])
        // No room after the indent: the lines as they are, rather than a loop that cannot make progress.
        #expect(TerminalRenderer.wrapped("aaa bbb", to: 2, indent: 2) == ["aaa bbb"])
    }
}
