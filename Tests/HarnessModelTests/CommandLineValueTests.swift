import HarnessModel
import Testing

/// Values as the command line spells them, and messages fit for a terminal.
struct CommandLineValueTests {
    @Test func repetitionsReadACountOrAuto() {
        #expect(RepetitionPolicy(parsing: "auto") == .auto(AdaptiveRepetitions()))
        #expect(RepetitionPolicy(parsing: "7") == .fixed(7))
        #expect(RepetitionPolicy(parsing: "0") == .fixed(0), "the range is checked by whoever uses it")
        #expect(RepetitionPolicy(parsing: "seven") == nil)
        #expect(RepetitionPolicy(parsing: "") == nil)
    }

    @Test func durationsAndSizesAreSpelledAsOptionsTakeThem() {
        #expect(Units.formatDurationExactly(nanoseconds: 1_000_000) == "1ms")
        #expect(Units.formatDurationExactly(nanoseconds: 500_000) == "500us")
        #expect(Units.formatDurationExactly(nanoseconds: 600_000_000_000) == "600s")
        #expect(Units.formatDurationExactly(nanoseconds: 1_500_000_000) == "1500ms")
        #expect(Units.formatDurationExactly(nanoseconds: 7) == "7ns")
        #expect(Units.formatDurationExactly(nanoseconds: 0) == "0ns")
        #expect(Units.formatBytesAsOption(256 * 1024) == "256KiB")
        #expect(Units.formatBytesAsOption(64 << 10) == "64KiB")
        #expect(Units.formatBytesAsOption(3 << 19) == "1.50MiB")
        #expect(Units.formatBytesAsOption(512) == "512B")
        // What they spell reads back as the same value.
        #expect(Units.parseBytes(Units.formatBytesAsOption(3 << 19)) == 3 << 19)
        #expect(Units.parseDurationNanoseconds(Units.formatDurationExactly(nanoseconds: 500_000)) == 500_000)
    }

    @Test func aLongMessageIsCutToLinesAndCharactersWithWhatWasLeftOut() {
        #expect(Excerpt.lines(of: "one\ntwo") == ["one", "two"])
        let wide = String(repeating: "x", count: 700)
        #expect(Excerpt.lines(of: wide) == [String(repeating: "x", count: 600) + "…"])
        let many = (1...25).map { "line \($0)" }.joined(separator: "\n")
        let lines = Excerpt.lines(of: many)
        #expect(lines.count == 10)
        #expect(lines.prefix(9) == ArraySlice((1...9).map { "line \($0)" }))
        #expect(lines.last == "... 16 more lines")
        #expect(Excerpt.lines(of: many, maximumLines: 0) == ["... 25 more lines"], "at least the line that says so")
    }
}
