/// Parsing and formatting of the units used in scenario files and reports.
///
/// Sizes use binary multiples (`KiB`, `MiB`, `GiB`, `TiB`); `KB`/`MB` are read as binary too, because
/// that is what people mean when they write a memory size. Rates are per second; durations take
/// `ns`, `us`, `ms`, `s`, `min`.
///
/// Numbers are plain decimals (`12`, `1.5`, `2.5e3` where a bare number is read): NaN, infinities,
/// hexadecimal and anything that overflows its type are malformed, never rounded or clamped. The
/// formatters are total: any value, NaN and infinities included, gives text.
public enum Units {
    /// Reads a plain decimal number (`12`, `-0.5`, `1.5e3`); nil for NaN, infinities, hexadecimal,
    /// anything that is not finite once read (`1e400`) and anything else that is not a decimal.
    public static func parseDecimal(_ text: some StringProtocol) -> Double? {
        var digits = 0
        var index = text.startIndex
        func skipDigits() {
            while index < text.endIndex, let ascii = text[index].asciiValue, (48...57).contains(ascii) {
                digits += 1
                index = text.index(after: index)
            }
        }
        if index < text.endIndex, text[index] == "+" || text[index] == "-" { index = text.index(after: index) }
        skipDigits()
        if index < text.endIndex, text[index] == "." {
            index = text.index(after: index)
            skipDigits()
        }
        guard digits > 0 else { return nil }
        if index < text.endIndex, text[index] == "e" || text[index] == "E" {
            index = text.index(after: index)
            if index < text.endIndex, text[index] == "+" || text[index] == "-" { index = text.index(after: index) }
            digits = 0
            skipDigits()
            guard digits > 0 else { return nil }
        }
        guard index == text.endIndex, let value = Double(String(text)), value.isFinite else { return nil }
        return value
    }

    /// Parses a byte size such as `4KiB`, `1.5 MiB`, `512`, `300MB`. Returns nil when malformed.
    public static func parseBytes(_ text: String) -> Int? {
        let (number, unit) = split(text)
        guard let number, number >= 0 else { return nil }
        let multiplier: Double
        switch unit.lowercased() {
        case "", "b", "bytes": multiplier = 1
        case "k", "kb", "kib": multiplier = 1024
        case "m", "mb", "mib": multiplier = 1024 * 1024
        case "g", "gb", "gib": multiplier = 1024 * 1024 * 1024
        // `formatBytes` writes TiB from 1 TiB on: what it writes reads back.
        case "t", "tb", "tib": multiplier = 1024 * 1024 * 1024 * 1024
        default: return nil
        }
        let value = number * multiplier
        // Sizes beyond Int's range are malformed here, not rounded.
        guard value < Double(Int.max) else { return nil }
        return Int(value.rounded())
    }

    /// Parses a duration such as `5ms`, `3s`, `1.5s`, `200us`, `2min` into nanoseconds.
    public static func parseDurationNanoseconds(_ text: String) -> Int64? {
        let (number, unit) = split(text)
        guard let number, number >= 0 else { return nil }
        let multiplier: Double
        switch unit.lowercased() {
        case "ns": multiplier = 1
        case "us", "µs": multiplier = 1_000
        case "ms": multiplier = 1_000_000
        case "s", "sec": multiplier = 1_000_000_000
        case "m", "min": multiplier = 60_000_000_000
        default: return nil
        }
        let value = number * multiplier
        guard value < Double(Int64.max) else { return nil }
        return Int64(value.rounded())
    }

    /// Parses a rate such as `500/s`, `30/min`, `2/ms` into events per second.
    public static func parseRatePerSecond(_ text: String) -> Double? {
        let parts = text.replacingSpaces().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = parseDecimal(parts[0]), count >= 0 else { return nil }
        let rate: Double
        switch parts[1].lowercased() {
        case "s", "sec": rate = count
        case "ms": rate = count * 1000
        case "min", "m": rate = count / 60
        default: return nil
        }
        // A count that is finite can still overflow once scaled (1e308/ms).
        return rate.isFinite ? rate : nil
    }

    /// Parses a share such as `50%` or `0.5` into a fraction (values outside 0...1 are returned as
    /// read, for the caller's range check); nil for anything but a finite decimal.
    public static func parseFraction(_ text: String) -> Double? {
        let trimmed = text.replacingSpaces()
        if trimmed.hasSuffix("%") {
            return parseDecimal(trimmed.dropLast()).map { $0 / 100 }
        }
        return parseDecimal(trimmed)
    }

    /// Formats bytes with a binary unit and two decimals: `64.00 MiB`, `512 B`, `-1.25 KiB`.
    public static func formatBytes(_ bytes: Int) -> String {
        formatBytes(Double(bytes))
    }

    /// Formats bytes with a binary unit and two decimals.
    public static func formatBytes(_ bytes: Double) -> String {
        guard bytes.isFinite else { return fixed(bytes, decimals: 0) + " B" }
        let magnitude = abs(bytes)
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = magnitude
        var index = 0
        while value >= 1024 && index < units.count - 1 {
            value /= 1024
            index += 1
        }
        let sign = bytes < 0 ? "-" : ""
        if index == 0 { return "\(sign)\(fixed(value.rounded(.towardZero), decimals: 0)) B" }
        return "\(sign)\(fixed(value, decimals: 2)) \(units[index])"
    }

    /// Formats nanoseconds as the most readable of `ns`, `µs`, `ms`, `s`, with up to two decimals.
    public static func formatDuration(nanoseconds: Int64) -> String {
        let value = Double(nanoseconds)
        if abs(value) >= 1e9 { return "\(fixed(value / 1e9, decimals: 2)) s" }
        if abs(value) >= 1e6 { return "\(fixed(value / 1e6, decimals: 2)) ms" }
        if abs(value) >= 1e3 { return "\(fixed(value / 1e3, decimals: 2)) µs" }
        return "\(nanoseconds) ns"
    }

    /// Formats a number with a fixed count of decimals, without Foundation (deterministic, locale-free).
    public static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let negative = value < 0 && scaled != 0
        // Beyond 2^62 the integer conversion would trap; such values print in exponent form.
        guard scaled < 4.0e18 else { return "\(value)" }
        let integer = UInt64(scaled)
        let whole = integer / UInt64(scale)
        let fraction = integer % UInt64(scale)
        var text = (negative ? "-" : "") + String(whole)
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: decimals - digits.count) + digits
        }
        return text
    }

    private static func split(_ text: String) -> (Double?, String) {
        let trimmed = text.replacingSpaces()
        // ASCII only: `Character.isNumber` also takes `½` and other scripts' digits.
        let numberPart = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-" || $0 == "+") }
        let unit = trimmed.dropFirst(numberPart.count)
        return (parseDecimal(numberPart), String(unit))
    }
}

extension String {
    fileprivate func replacingSpaces() -> String {
        String(filter { $0 != " " && $0 != "_" })
    }
}
