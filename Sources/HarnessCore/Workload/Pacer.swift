#if canImport(Glibc)
import Glibc
#endif

/// Paces a workload's loop (writes, updates) at a fixed rate with absolute deadlines.
///
/// Tick `n` is due `n / rate` seconds after the pacer was made, so time lost to a slow tick is
/// made up by the following ones instead of adding up: relative sleeps drift ~12% low on this
/// machine kind. A pacer that fell behind does not sleep until it has caught up.
public struct Pacer: Sendable {
    private let startNanoseconds: Int64
    private let periodNanoseconds: Double

    /// A pacer starting now, `ratePerSecond` ticks per second (must be positive).
    public init(ratePerSecond: Double) {
        precondition(ratePerSecond > 0, "a pacer needs a positive rate, got \(ratePerSecond)/s")
        startNanoseconds = Self.monotonicNanoseconds()
        periodNanoseconds = 1_000_000_000 / ratePerSecond
    }

    /// Ticks due within `duration` of the start: the number of iterations of a paced loop.
    public func ticks(in duration: Duration) -> Int {
        Int(Double(duration.nanoseconds) / periodNanoseconds)
    }

    /// Sleeps until tick `index` (0 is the start) is due.
    public func wait(forTick index: Int) {
        Self.sleep(untilMonotonicNanoseconds: startNanoseconds + Int64(Double(index) * periodNanoseconds))
    }

    /// `CLOCK_MONOTONIC` now, nanoseconds.
    public static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Sleeps until `CLOCK_MONOTONIC` reads `deadline` nanoseconds (returns at once when it has passed).
    public static func sleep(untilMonotonicNanoseconds deadline: Int64) {
        var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }

    /// Sleeps for `duration` (nothing for zero or negative durations).
    public static func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        sleep(untilMonotonicNanoseconds: monotonicNanoseconds() + duration.nanoseconds)
    }
}
