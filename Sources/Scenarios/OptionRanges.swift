import HarnessModel

/// The ranges a run's settings may take, wherever they are written: a scenario file's keys (the parser), a
/// library caller's `RunOptions` (the planner) and the command line's options are checked against this one
/// table, and their messages state the range from it.
public enum OptionRanges {
    /// Repetitions of each strategy: `repetitions:`, `--repeat N`.
    public static let repetitions = 1...100
    /// Sampling interval: `interval:`, `--interval` (where 0 also turns sampling off).
    public static let interval: ClosedRange<Duration> = .microseconds(50) ... .seconds(10)
    /// Time limit per case: `timeout:`, `--timeout`.
    public static let timeout: ClosedRange<Duration> = .milliseconds(100) ... .seconds(3600)
    /// Wait after teardown before the residue is read: `settle:`.
    public static let settle: ClosedRange<Duration> = .zero ... .seconds(60)
    /// `memoryLimit:`, bytes: far beyond any device, small enough to be a typo.
    public static let memoryLimitBytes = (1 << 20)...(1 << 40)
    /// Cases run at once: `--jobs N`.
    public static let jobs = 1...64
    /// Mean bytes between sampled allocation stacks: `--stack-sample`.
    public static let stackSampleBytes = (1 << 10)...(64 << 20)

    /// `1...100`.
    public static func text(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound)...\(range.upperBound)" }

    /// `100ms...3600s`: durations as options take them.
    public static func text(_ range: ClosedRange<Duration>) -> String {
        Units.formatDurationExactly(nanoseconds: range.lowerBound.nanoseconds) + "..."
            + Units.formatDurationExactly(nanoseconds: range.upperBound.nanoseconds)
    }

    /// `1KiB...64MiB`: sizes as options take them.
    public static func bytesText(_ range: ClosedRange<Int>) -> String {
        Units.formatBytesAsOption(range.lowerBound) + "..." + Units.formatBytesAsOption(range.upperBound)
    }

    /// What is wrong with `value` written as `written`, after the setting's name: `-1 is negative; allowed:
    /// 1...100` or `0 is out of range; allowed: 1...100`; nil inside the range. `allowed` is the range's text
    /// with any other accepted value (`1...100, or auto`).
    public static func problem(_ value: Int, in range: ClosedRange<Int>, written: String? = nil, allowed: String? = nil)
        -> String?
    {
        guard !range.contains(value) else { return nil }
        return message(written ?? "\(value)", negative: value < 0, allowed: allowed ?? text(range))
    }

    /// The same for a duration; `offAllowed`: 0 is also accepted (sampling off).
    public static func problem(_ value: Duration, in range: ClosedRange<Duration>, offAllowed: Bool = false)
        -> String?
    {
        guard !range.contains(value), !(offAllowed && value == .zero) else { return nil }
        let allowed = (offAllowed ? "0ms (off) or " : "") + text(range)
        let written = Units.formatDurationExactly(nanoseconds: abs(value.nanoseconds))
        return message(value < .zero ? "-" + written : written, negative: value < .zero, allowed: allowed)
    }

    private static func message(_ written: String, negative: Bool, allowed: String) -> String {
        "\(written) is \(negative ? "negative" : "out of range"); allowed: \(allowed)"
    }
}
