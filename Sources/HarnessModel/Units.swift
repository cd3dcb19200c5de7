/// Parsing and formatting of the units used in scenario files and reports.
///
/// Sizes use binary multiples (`KiB`, `MiB`, `GiB`); `KB`/`MB` are read as binary too, because
/// that is what people mean when they write a memory size. Rates are per second; durations take
/// `ns`, `us`, `ms`, `s`, `min`.
public enum Units {
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
        guard parts.count == 2, let count = Double(parts[0]), count >= 0 else { return nil }
        switch parts[1].lowercased() {
        case "s", "sec": return count
        case "ms": return count * 1000
        case "min", "m": return count / 60
        default: return nil
        }
    }

    /// Parses a share such as `50%` or `0.5` into a fraction in 0...1 (values outside are returned as read).
    public static func parseFraction(_ text: String) -> Double? {
        let trimmed = text.replacingSpaces()
        if trimmed.hasSuffix("%") {
            return Double(trimmed.dropLast()).map { $0 / 100 }
        }
        return Double(trimmed)
    }

    /// Formats bytes with a binary unit and two decimals: `64.00 MiB`, `512 B`, `-1.25 KiB`.
    public static func formatBytes(_ bytes: Int) -> String {
        formatBytes(Double(bytes))
    }

    /// Formats bytes with a binary unit and two decimals.
    public static func formatBytes(_ bytes: Double) -> String {
        let magnitude = abs(bytes)
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = magnitude
        var index = 0
        while value >= 1024 && index < units.count - 1 {
            value /= 1024
            index += 1
        }
        let sign = bytes < 0 ? "-" : ""
        if index == 0 { return "\(sign)\(Int(value)) B" }
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
        let numberPart = trimmed.prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" }
        let unit = trimmed.dropFirst(numberPart.count)
        return (Double(numberPart), String(unit))
    }
}

extension String {
    fileprivate func replacingSpaces() -> String {
        String(filter { $0 != " " && $0 != "_" })
    }
}
