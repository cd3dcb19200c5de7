#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// The one clock of the harness: `CLOCK_MONOTONIC`, in nanoseconds. Sample times, phase
/// boundaries, case durations, pacing and time limits all read it, so their figures line up.
public enum MonotonicClock {
    /// Now, nanoseconds since an arbitrary origin (the same for every process on the machine).
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        // CLOCK_MONOTONIC cannot fail on Linux with a valid pointer.
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Sleeps until the clock reads `deadline` (returns at once when it has passed). An absolute
    /// deadline does not drift: relative sleeps run ~12% long on this machine kind.
    public static func sleep(untilNanoseconds deadline: Int64) {
        var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        // A signal handler interrupting the sleep is no reason to wake early: sleep again to the same deadline.
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }

    /// Sleeps for `duration` (nothing for zero or negative durations).
    public static func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        sleep(untilNanoseconds: nanoseconds() + duration.nanoseconds)
    }
}
