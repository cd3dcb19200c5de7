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
        startNanoseconds = MonotonicClock.nanoseconds()
        periodNanoseconds = 1_000_000_000 / ratePerSecond
    }

    /// Ticks due within `duration` of the start: the number of iterations of a paced loop.
    public func ticks(in duration: Duration) -> Int {
        Int(Double(duration.nanoseconds) / periodNanoseconds)
    }

    /// Sleeps until tick `index` (0 is the start) is due.
    public func wait(forTick index: Int) {
        MonotonicClock.sleep(untilNanoseconds: startNanoseconds + Int64(Double(index) * periodNanoseconds))
    }

    /// `MonotonicClock.nanoseconds()`, for workloads written against the pacer.
    public static func monotonicNanoseconds() -> Int64 { MonotonicClock.nanoseconds() }

    /// `MonotonicClock.sleep(untilNanoseconds:)`.
    public static func sleep(untilMonotonicNanoseconds deadline: Int64) {
        MonotonicClock.sleep(untilNanoseconds: deadline)
    }

    /// `MonotonicClock.sleep(for:)`.
    public static func sleep(for duration: Duration) { MonotonicClock.sleep(for: duration) }
}
