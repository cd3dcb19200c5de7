import Foundation
import HarnessModel
import TestSupport
import Testing

/// Property tests of the unit parsers and formatters: tens of thousands of generated spellings
/// (digits, signs, points, exponents, NaN and infinity words, hexadecimal, every unit, spaces and
/// other scripts' digits) and of values (NaN, infinities, subnormals, the ends of every range).
/// Parsers return a value in range or nil, never a trap; formatters return text for any value;
/// what a formatter writes parses back to the same value, or within its rounding. Deterministic by seed.
struct UnitsFuzzTests {
    static let inputs = ProcessInfo.processInfo.environment["MEMHARNESS_FUZZ_INPUTS"].flatMap { Int($0) } ?? 10_000

    static let pieces = [
        "0", "1", "5", "9", "12", "007", ".", "..", "-", "+", "e", "E", "e-", "e+", "1e400", "nan", "NaN", "inf",
        "Infinity", "0x", "1p3", "_", " ", "½", "٣", "١٢", "9223372036854775807", "18446744073709551616", "%", "/",
        "B", "KiB", "kb", "M", "MiB", "GiB", "TB", "ns", "us", "µs", "ms", "s", "sec", "min", "m", "h", "/s", "/ms",
        "/min", "bytes", "\u{0}", "\u{FEFF}",
    ]

    static func spelling(_ random: inout FuzzRandom) -> String {
        (0..<Int.random(in: 1...6, using: &random)).map { _ in random.pick(pieces) }.joined()
    }

    @Test func parsersReturnAValueInRangeOrNil() {
        var random = FuzzRandom(seed: 0x5EED_0201)
        for _ in 0..<Self.inputs {
            let text = Self.spelling(&random)
            if let bytes = Units.parseBytes(text) { #expect(bytes >= 0, "\(text)") }
            if let nanoseconds = Units.parseDurationNanoseconds(text) { #expect(nanoseconds >= 0, "\(text)") }
            if let rate = Units.parseRatePerSecond(text) { #expect(rate.isFinite && rate >= 0, "\(text)") }
            if let fraction = Units.parseFraction(text) { #expect(fraction.isFinite, "\(text)") }
            if let number = Units.parseDecimal(text) { #expect(number.isFinite, "\(text)") }
            if let level = MemoryLevel.parse(text) {
                switch level {
                case .bytes(let bytes): #expect(bytes > 0, "\(text)")
                case .fractionOfLimit(let fraction): #expect(fraction > 0 && fraction <= 1, "\(text)")
                }
            }
        }
    }

    @Test(arguments: [
        "nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400", "0x10", "0x1p3", "1e", "e5", ".", "-", "+", "",
        "1.2.3", "١٢", "½",
    ])
    func nonFiniteAndNonDecimalNumbersAreRefused(text: String) {
        #expect(Units.parseDecimal(text) == nil)
        #expect(Units.parseFraction(text) == nil)
        #expect(Units.parseFraction(text + "%") == nil)
        #expect(Units.parseRatePerSecond(text + "/s") == nil)
        #expect(Units.parseBytes(text + "MiB") == nil)
        #expect(Units.parseDurationNanoseconds(text + "ms") == nil)
    }

    @Test func overflowIsMalformedNotRounded() {
        #expect(Units.parseBytes("8EiB") == nil)
        #expect(Units.parseBytes("9999999999GiB") == nil)
        #expect(Units.parseBytes("8589934592GiB") == nil)
        #expect(Units.parseBytes("8589934591GiB") == 9_223_372_035_781_033_984)
        #expect(Units.parseDurationNanoseconds("153722868min") == nil)
        #expect(Units.parseDurationNanoseconds("153722867min") == 9_223_372_020_000_000_000)
        #expect(Units.parseRatePerSecond("1e308/ms") == nil)
        #expect(Units.parseBytes("-0") == 0)
    }

    @Test func formattersTakeAnyValue() {
        var random = FuzzRandom(seed: 0x5EED_0202)
        let special: [Double] = [
            .nan, -.nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            .leastNonzeroMagnitude, 0, -0.0, 1e18, 4e18, 9.3e18, -9.3e18, 1e300, 0.5, 1023.999,
        ]
        for index in 0..<Self.inputs {
            let value =
                index < special.count
                ? special[index] : Double(bitPattern: random.next())
            for decimals in 0...3 { #expect(!Units.fixed(value, decimals: decimals).isEmpty) }
            #expect(!Units.formatBytes(value).isEmpty)
            let integer = Int(truncatingIfNeeded: random.next())
            #expect(!Units.formatBytes(integer).isEmpty)
            #expect(!Units.formatDuration(nanoseconds: Int64(truncatingIfNeeded: random.next())).isEmpty)
        }
        #expect(Units.formatBytes(Double.nan) == "nan B")
        #expect(Units.formatBytes(-Double.infinity) == "-inf B")
        #expect(Units.formatBytes(Int.min).hasPrefix("-"))
    }

    @Test func formattedSizesAndDurationsReadBack() {
        var random = FuzzRandom(seed: 0x5EED_0203)
        for _ in 0..<Self.inputs {
            // Sizes up to 16 TiB, durations up to a day: what scenarios hold.
            let bytes = Int.random(in: 0...(1 << 44), using: &random)
            let text = Units.formatBytes(bytes)
            let back = Units.parseBytes(text)
            #expect(back != nil, "\(text)")
            // Two decimals of the unit: within half a hundredth of it.
            let unit = bytes < 1024 ? 1.0 : pow(1024, floor(log(Double(bytes)) / log(1024)))
            #expect(abs(Double(back ?? 0) - Double(bytes)) <= unit * 0.005 + 0.5, "\(bytes) → \(text)")
            #expect(Units.parseBytes("\(bytes)B") == bytes)

            let nanoseconds = Int64.random(in: 0...86_400_000_000_000, using: &random)
            let duration = Units.formatDuration(nanoseconds: nanoseconds)
            let read = Units.parseDurationNanoseconds(duration)
            #expect(read != nil, "\(duration)")
            let scale =
                nanoseconds >= 1_000_000_000 ? 1e9 : nanoseconds >= 1_000_000 ? 1e6 : nanoseconds >= 1_000 ? 1e3 : 1
            #expect(abs(Double(read ?? 0) - Double(nanoseconds)) <= scale * 0.005 + 0.5, "\(nanoseconds) → \(duration)")
            #expect(Units.parseDurationNanoseconds("\(nanoseconds)ns") == nanoseconds)

            let decimal = Double.random(in: -1e12...1e12, using: &random)
            #expect(Units.parseDecimal("\(decimal)") == decimal)
            let percent = Int.random(in: 0...100, using: &random)
            #expect(Units.parseFraction("\(percent)%") == Double(percent) / 100)
        }
    }

    @Test func excerptsAreShortAndOneLine() {
        var random = FuzzRandom(seed: 0x5EED_0204)
        let characters = Array("ab\n\r\t\u{0}é🙂 ,'\"")
        for _ in 0..<Self.inputs {
            let length = Int.random(in: 0...80, using: &random)
            let text = String((0..<length).map { _ in random.pick(characters) })
            let excerpt = Excerpt.of(text)
            #expect(!excerpt.contains("\n") && !excerpt.contains("\r") && !excerpt.contains("\u{0}"))
            #expect(excerpt.count <= Excerpt.maximumCharacters * 7 + 24)
        }
    }
}
