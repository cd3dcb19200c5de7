import Foundation
import HarnessModel

/// `--jobs N` or `--jobs auto`: how many cases of scenarios that allow it run at once.
public enum JobCount: Sendable, Hashable {
    /// The number of CPUs this process may run on.
    case auto
    case count(Int)

    /// Reads `auto` or a whole number; nil for anything else (the range is `OptionRanges.jobs`).
    public init?(parsing text: String) {
        if text == "auto" {
            self = .auto
        } else if let count = Int(text) {
            self = .count(count)
        } else {
            return nil
        }
    }

    /// The count: `auto` is the number of CPUs this process may run on (at least 1).
    public var resolved: Int {
        switch self {
        case .auto: return max(ProcessInfo.processInfo.activeProcessorCount, 1)
        case .count(let count): return count
        }
    }
}

/// The ranges the command line allows a run's options, checked before any file is read. `RunPlanner`
/// checks a library caller's options more loosely (no sampling interval below 50 us is refused there).
public enum OptionRanges {
    /// `--repeat N`.
    public static let repetitions = 1...100
    /// `--interval`, nanoseconds, besides 0 (sampling off): 50 us to 10 s.
    public static let intervalNanoseconds: ClosedRange<Int64> = 50_000...10_000_000_000
    /// `--timeout`, nanoseconds: 100 ms to an hour.
    public static let timeoutNanoseconds: ClosedRange<Int64> = 100_000_000...3_600_000_000_000
    /// `--jobs N`.
    public static let jobs = 1...64
    /// `--stack-sample`, bytes: 1 KiB to 64 MiB.
    public static let stackSampleBytes = (1 << 10)...(64 << 20)

    /// The first option out of its range, as a message naming the option, the value and what is allowed;
    /// nil when every value is allowed.
    public static func problem(
        repetitions: RepetitionPolicy? = nil, interval: Duration = .milliseconds(1), timeout: Duration? = nil,
        samplesMaxRows: Int = 0, jobs: JobCount = .auto, stackSampleBytes: Int = 64 << 10
    ) -> String? {
        if case .fixed(let count)? = repetitions, !Self.repetitions.contains(count) {
            return "--repeat \(count) is out of range; allowed: 1...100, or auto"
        }
        let nanoseconds = interval.nanoseconds
        if nanoseconds != 0 && !Self.intervalNanoseconds.contains(nanoseconds) {
            return "--interval \(Units.formatDuration(nanoseconds: nanoseconds)) is out of range; "
                + "allowed: 0ms (off) or 50us...10s"
        }
        if let timeout, !Self.timeoutNanoseconds.contains(timeout.nanoseconds) {
            return "--timeout \(Units.formatDuration(nanoseconds: timeout.nanoseconds)) is out of range; "
                + "allowed: 100ms...3600s"
        }
        if samplesMaxRows < 0 {
            return "--samples-max-rows must be 0 (keep all) or more, got \(samplesMaxRows)"
        }
        if case .count(let count) = jobs, !Self.jobs.contains(count) {
            return "--jobs \(count) is out of range; allowed: 1...64 or auto"
        }
        if !Self.stackSampleBytes.contains(stackSampleBytes) {
            return "--stack-sample \(stackSampleBytes) bytes is out of range; allowed: 1KiB...64MiB"
        }
        return nil
    }
}
