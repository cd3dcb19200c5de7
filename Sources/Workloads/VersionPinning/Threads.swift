import Dispatch
import Foundation
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

/// A thread that runs one body and hands back its report when joined.
final class WorkerThread<Report: Sendable>: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let report = Mutex<Report?>(nil)

    private init() {}

    /// Starts `body` on a new thread named `name`.
    static func start(name: String, _ body: @escaping @Sendable () -> Report) -> WorkerThread {
        let worker = WorkerThread()
        let thread = Thread {
            let value = body()
            worker.report.withLock { $0 = value }
            worker.finished.signal()
        }
        thread.name = name
        thread.start()
        return worker
    }

    /// Waits for the body to return; its report.
    func join() -> Report? {
        finished.wait()
        return report.withLock { $0 }
    }
}

/// A one-way switch the case's main thread flips to end a burst; workers poll it.
final class StopSignal: Sendable {
    private let stopped = Atomic<Bool>(false)

    var isStopped: Bool { stopped.load(ordering: .acquiring) }

    func stop() { stopped.store(true, ordering: .releasing) }
}

/// A `CLOCK_MONOTONIC` reading, nanoseconds.
func monotonicNanoseconds() -> Int64 {
    Pacer.monotonicNanoseconds()
}

/// Sleeps until the monotonic clock reads `deadline` (nanoseconds), or until `stop` is flipped.
///
/// Absolute deadlines keep a paced loop at its rate (relative sleeps drift low); the sleep is cut
/// into slices of at most 5 ms so a stop is seen promptly. Returns false when stopped.
@discardableResult
func sleep(until deadline: Int64, unless stop: StopSignal) -> Bool {
    let slice: Int64 = 5_000_000
    while !stop.isStopped {
        let now = monotonicNanoseconds()
        if now >= deadline { return true }
        let wake = min(deadline, now + slice)
        var request = timespec(tv_sec: Int(wake / 1_000_000_000), tv_nsec: Int(wake % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
    }
    return false
}

/// Deadlines for a loop that runs `rate` times per second from when it is made, cut short by a
/// `StopSignal` (WorkloadKit's `Pacer` sleeps through to its deadline).
///
/// A loop that falls behind runs its late iterations back to back, so the count over the burst
/// matches the rate as long as the machine can keep up at all.
struct StoppablePacer {
    private let start = monotonicNanoseconds()
    private let intervalNanoseconds: Double
    private var tick = 0

    /// - Parameter rate: iterations per second (above 0).
    init(rate: Double) {
        // The parameter range keeps rates positive; guard anyway so a zero never divides.
        intervalNanoseconds = 1e9 / max(rate, 1e-3)
    }

    /// Sleeps until the next iteration is due; false when `stop` was flipped.
    mutating func wait(unless stop: StopSignal) -> Bool {
        tick += 1
        return sleep(until: start + Int64(Double(tick) * intervalNanoseconds), unless: stop)
    }
}
