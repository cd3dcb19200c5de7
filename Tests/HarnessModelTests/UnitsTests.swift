import HarnessModel
import Testing

struct UnitsTests {
    @Test(arguments: [
        ("4KiB", 4096), ("4 KiB", 4096), ("1.5MiB", 1_572_864), ("512", 512), ("512B", 512),
        ("300MB", 314_572_800), ("2GiB", 2_147_483_648), ("1k", 1024),
    ])
    func parsesSizes(text: String, bytes: Int) {
        #expect(Units.parseBytes(text) == bytes)
    }

    @Test(arguments: ["4XB", "KiB", "-1KiB", "four", "1..5MiB", ""])
    func rejectsMalformedSizes(text: String) {
        #expect(Units.parseBytes(text) == nil)
    }

    @Test(arguments: [
        ("5ms", Int64(5_000_000)), ("3s", 3_000_000_000), ("1.5s", 1_500_000_000),
        ("200us", 200_000), ("2min", 120_000_000_000), ("10ns", 10),
    ])
    func parsesDurations(text: String, nanoseconds: Int64) {
        #expect(Units.parseDurationNanoseconds(text) == nanoseconds)
    }

    @Test(arguments: ["5", "5 parsecs", "ms", "-3s"])
    func rejectsMalformedDurations(text: String) {
        #expect(Units.parseDurationNanoseconds(text) == nil)
    }

    @Test func parsesRatesAndFractions() {
        #expect(Units.parseRatePerSecond("500/s") == 500)
        #expect(Units.parseRatePerSecond("30/min") == 0.5)
        #expect(Units.parseRatePerSecond("2/ms") == 2000)
        #expect(Units.parseRatePerSecond("500") == nil)
        #expect(Units.parseRatePerSecond("500/fortnight") == nil)
        #expect(Units.parseFraction("50%") == 0.5)
        #expect(Units.parseFraction("0.25") == 0.25)
        #expect(Units.parseFraction("half") == nil)
    }

    @Test(arguments: [
        (0, "0 B"), (512, "512 B"), (1024, "1.00 KiB"), (1_572_864, "1.50 MiB"),
        (-2048, "-2.00 KiB"), (3_221_225_472, "3.00 GiB"),
    ])
    func formatsBytesWithBinaryUnits(bytes: Int, text: String) {
        #expect(Units.formatBytes(bytes) == text)
    }

    @Test func formatsFixedDecimalsWithoutLocale() {
        #expect(Units.fixed(1.005, decimals: 1) == "1.0")
        #expect(Units.fixed(2.5, decimals: 0) == "3")
        #expect(Units.fixed(-0.04, decimals: 1) == "0.0")
        #expect(Units.fixed(-1.25, decimals: 2) == "-1.25")
        #expect(Units.fixed(14.23, decimals: 1) == "14.2")
        #expect(Units.formatDuration(nanoseconds: 1_420_000_000) == "1.42 s")
        #expect(Units.formatDuration(nanoseconds: 5_000_000) == "5.00 ms")
    }
}
