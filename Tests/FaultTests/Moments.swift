import Foundation

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Where in a run a fault strikes.
enum Moment: String, CaseIterable, CustomStringConvertible {
    /// The handlers are installed and no case process has started yet (planning, locking, the run's folder).
    case beforeFirstCase = "before the first case"
    /// A case process is running.
    case duringCase = "during a case"
    /// The report's staging folder exists: the report is being written or moved into place.
    case duringWrite = "during the report write"

    var description: String { rawValue }

    /// The scenario that gives the moment room: a long case, or a report of a few hundred KiB.
    var scenario: String { self == .duringWrite ? Scenarios.heavy : Scenarios.slow() }
    var arguments: [String] { self == .duringWrite ? ["--samples-max-rows", "0"] : [] }
}

/// Brings a run to a moment and strikes there.
struct Striker {
    let trial: Trial
    let run: HarnessProcess

    /// Waits (at most 60 s) until `run` reaches `moment`, then calls `strike` and returns the monotonic time it
    /// struck at; nil when the run ended before the moment came. `signal` is the one the strike sends (its
    /// handler must be installed before the first case). A random pause inside the moment varies the point hit.
    func strike(at moment: Moment, signal: Int32, _ strike: () -> Void) throws -> UInt64? {
        switch moment {
        case .beforeFirstCase:
            guard
                Deadline.poll(
                    seconds: 60, interval: 0.0005, { ProcessTable.catches(run.pid, signal) || !run.isRunning })
            else { throw FaultError("the handler of signal \(signal) was never installed") }
            guard run.isRunning else { return nil }
            usleep(UInt32.random(in: 0...3_000))
            // Stopped while we look: no case may start between the look and the signal.
            run.send(SIGSTOP)
            defer { run.send(SIGCONT) }
            _ = Deadline.poll(seconds: 2, interval: 0.0005) { ProcessTable.state(of: run.pid) == "T" }
            guard !caseStarted else { throw FaultError("a case started before the strike: \(moment) was missed") }
            let time = Deadline.now
            strike()
            return time
        case .duringCase:
            guard Deadline.poll(seconds: 60, interval: 0.005, { caseStarted || !run.isRunning }) else {
                throw FaultError("no case process started within 60 s")
            }
            guard run.isRunning else { return nil }
            usleep(UInt32.random(in: 0...300_000))
            let time = Deadline.now
            strike()
            return time
        case .duringWrite:
            let staging = "\(trial.reports)/.out.new-\(run.pid)"
            guard
                Deadline.poll(
                    seconds: 60, interval: 0.0001, { access(staging, F_OK) == 0 || !run.isRunning })
            else { throw FaultError("the report was not written within 60 s") }
            guard run.isRunning else { return nil }
            if Bool.random() { usleep(UInt32.random(in: 0...20_000)) }
            let time = Deadline.now
            strike()
            return time
        }
    }

    /// A case process of the run exists: a `_run-case` child, or a child running a command case's program.
    var caseStarted: Bool {
        ProcessTable.children(of: run.pid).contains { child in
            let commandLine = ProcessTable.read("/proc/\(child)/cmdline")
            return commandLine.contains("_run-case") || !commandLine.contains("\0run\0")
        }
    }
}
