extension RepetitionPolicy {
    /// Reads `auto` (the default `AdaptiveRepetitions`) or a whole count, as `--repeat` takes them; nil for
    /// anything else. The count is not range-checked here.
    public init?(parsing text: String) {
        if text == "auto" {
            self = .auto(AdaptiveRepetitions())
        } else if let count = Int(text) {
            self = .fixed(count)
        } else {
            return nil
        }
    }
}

extension Units {
    /// The shortest exact spelling of a duration in the units options take: `1ms`, `500us`, `2s`, `7ns`.
    public static func formatDurationExactly(nanoseconds: Int64) -> String {
        let units: [(String, Int64)] = [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)]
        for (unit, scale) in units where nanoseconds % scale == 0 && nanoseconds >= scale {
            return "\(nanoseconds / scale)\(unit)"
        }
        return "\(nanoseconds)ns"
    }

    /// A size as options take it: `256KiB`, `1.50MiB`, `512B`.
    public static func formatBytesAsOption(_ bytes: Int) -> String {
        let parts = formatBytes(bytes).split(separator: " ")
        guard let number = parts.first else { return "\(bytes)B" }
        // Whole values lose their decimals (`256.00 KiB` → `256KiB`); the space goes.
        return (number.hasSuffix(".00") ? String(number.dropLast(3)) : String(number)) + parts.dropFirst().joined()
    }
}
