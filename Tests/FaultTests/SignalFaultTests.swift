import Foundation
import TestSupport
import Testing

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// SIGINT, SIGTERM and SIGHUP at random points of a run, and kill -9 of the harness: the run ends within
/// 2 s with 128 + the signal, nothing of it runs on, no temporary file stays, and the report folder holds
/// the previous report (or nothing when there was none), or, for a signal that came once the new report was
/// in place, the complete new one.
@Suite(.serialized, .timeLimit(.minutes(30)))
struct SignalFaultTests {
    static let signals: [(Int32, String)] = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")]

    static let strikes: [(Int32, String, Moment)] = signals.flatMap { signal in
        Moment.allCases.map { (signal.0, signal.1, $0) }
    }

    @Test(arguments: strikes)
    func aSignalStopsTheRunAndKeepsThePreviousReport(signal: Int32, name: String, moment: Moment) throws {
        let results = try runTrials("\(name) \(moment)") { index in
            let trial = try Trial()
            // Odd trials start without an earlier report: the folder must then stay absent.
            if index % 2 == 0 { try trial.placePrevious() }
            let scenario = try trial.scenario(moment.scenario)
            let run = try trial.start(["run", scenario, "--out", trial.out] + moment.arguments)
            guard
                let struck = try Striker(trial: trial, run: run).strike(
                    at: moment, signal: signal, { run.send(signal) })
            else { throw MissedMoment() }
            let ending = try run.finish(within: 30, "\(name) \(moment)")
            let elapsed = Double(Deadline.now - struck) / 1e9
            var folder: Set<Allowed> = trial.previous == nil ? [.absent] : [.previous]
            // A signal after the atomic rename finds the new report complete in place: the run says so.
            if moment == .duringWrite { folder.insert(.complete) }
            return trial.judge(
                run, ending: ending, elapsed: elapsed,
                Expectation(
                    endings: [.exited(128 + signal)], withinSeconds: 2, folder: folder,
                    // The slow scenario's one case never finished; the heavy one's two did.
                    message: moment == .duringWrite
                        ? "interrupted by \(name)" : "interrupted by \(name) after 0 of 1 cases")
            )
        }
        #expect(results.problems == [])
    }

    @Test(arguments: [Moment.duringCase, .duringWrite])
    func killNineLeavesOneCompleteRunAndTheGuardCleansUp(moment: Moment) throws {
        let results = try runTrials("kill -9 \(moment)") { index in
            let trial = try Trial()
            if index % 2 == 0 { try trial.placePrevious() }
            let scenario = try trial.scenario(moment.scenario)
            let run = try trial.start(["run", scenario, "--out", trial.out] + moment.arguments)
            guard try Striker(trial: trial, run: run).strike(at: moment, signal: SIGKILL, { run.send(SIGKILL) }) != nil
            else { throw MissedMoment() }
            let ending = try run.finish(within: 10, "kill -9 \(moment)")
            var folder: Set<Allowed> = trial.previous == nil ? [.absent] : [.previous]
            if moment == .duringWrite { folder.insert(.complete) }
            // The case process dies with its parent (PDEATHSIG); the guard removes the rest within a moment.
            return trial.judge(
                run, ending: ending, elapsed: nil,
                Expectation(endings: [.signaled(SIGKILL)], withinSeconds: nil, folder: folder, grace: 3))
        }
        #expect(results.problems == [])
    }

    /// The whole tree stopped (SIGSTOP to every process of the run: the harness, its cleanup guard, the case) and the
    /// harness then killed: the guard, in a session of its own, is continued by its parent's death and cleans up, and
    /// the stopped case dies with its parent. Nothing stays behind stopped.
    @Test func aStoppedRunKilledLeavesNoStoppedGuard() throws {
        let results = try runTrials("SIGSTOP the tree, then kill -9") { index in
            let trial = try Trial()
            if index % 2 == 0 { try trial.placePrevious() }
            let scenario = try trial.scenario(Moment.duringCase.scenario)
            let run = try trial.start(["run", scenario, "--out", trial.out] + Moment.duringCase.arguments)
            let stopAll = {
                for process in ProcessTable.processes(marked: trial.marker) { kill(process.pid, SIGSTOP) }
                run.send(SIGKILL)
            }
            guard try Striker(trial: trial, run: run).strike(at: .duringCase, signal: SIGKILL, stopAll) != nil
            else { throw MissedMoment() }
            let ending = try run.finish(within: 10, "SIGSTOP then kill -9")
            return trial.judge(
                run, ending: ending, elapsed: nil,
                Expectation(
                    endings: [.signaled(SIGKILL)], withinSeconds: nil,
                    folder: trial.previous == nil ? [.absent] : [.previous], grace: 3))
        }
        #expect(results.problems == [])
    }

    /// A run started with SIGINT, SIGTERM and SIGHUP blocked (a parent that spawned it from a thread blocking
    /// them: a mask is inherited through exec) still stops on each of them.
    @Test(arguments: [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")])
    func aRunStartedWithTheSignalsBlockedStillStops(signal: Int32, name: String) throws {
        let results = try runTrials("\(name) to a run started with it blocked") { _ in
            let trial = try Trial()
            let scenario = try trial.scenario(Moment.duringCase.scenario)
            let run = try trial.start(
                ["run", scenario, "--out", trial.out] + Moment.duringCase.arguments,
                blockedSignals: [SIGINT, SIGTERM, SIGHUP])
            guard
                let struck = try Striker(trial: trial, run: run).strike(
                    at: .duringCase, signal: signal, { run.send(signal) })
            else { throw MissedMoment() }
            let ending = try run.finish(within: 30, "\(name) blocked at start")
            return trial.judge(
                run, ending: ending, elapsed: Double(Deadline.now - struck) / 1e9,
                Expectation(
                    endings: [.exited(128 + signal)], withinSeconds: 2, folder: [.absent],
                    message: "interrupted by \(name) after 0 of 1 cases"))
        }
        #expect(results.problems == [])
    }

    /// A command case whose program started a child of its own: SIGINT, SIGTERM, SIGHUP or kill -9 of the
    /// harness ends the child too (the whole process group of the case), not only the program.
    @Test(arguments: [(SIGINT, "SIGINT"), (SIGKILL, "kill -9")])
    func theChildrenOfACaseProgramEndWithTheRun(signal: Int32, name: String) throws {
        let results = try runTrials("\(name) during a command case with a child") { index in
            let trial = try Trial()
            if index % 2 == 0 { try trial.placePrevious() }
            let scenario = try trial.scenario(Scenarios.shell("sleep 30; true"))
            let run = try trial.start(["run", scenario, "--out", trial.out])
            // The shell's `sleep` is a grandchild of the harness: wait for it before striking.
            guard
                Deadline.poll(
                    seconds: 60, interval: 0.005,
                    { ProcessTable.processes(marked: trial.marker).contains { $0.commandLine.hasPrefix("sleep 30") } })
            else { throw FaultError("the command case's sleep never started: \(trial.stderrText)") }
            let struck = Deadline.now
            run.send(signal)
            let ending = try run.finish(within: 10, name)
            let interrupted = signal != SIGKILL
            return trial.judge(
                run, ending: ending, elapsed: Double(Deadline.now - struck) / 1e9,
                Expectation(
                    endings: [interrupted ? .exited(128 + signal) : .signaled(SIGKILL)],
                    withinSeconds: interrupted ? 2 : nil, folder: trial.previous == nil ? [.absent] : [.previous],
                    grace: interrupted ? 1 : 3, message: interrupted ? "interrupted by \(name)" : nil))
        }
        #expect(results.problems == [])
    }
}

/// A server case under load: SIGINT or kill -9 of the harness ends the server and the load client with the run, and
/// frees the server's port.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ServerSignalFaultTests {
    static let fixture = HarnessProcess.buildDirectory.appendingPathComponent("http-fixture").path

    @Test(arguments: [(SIGINT, "SIGINT"), (SIGKILL, "kill -9")])
    func theServerAndItsLoadEndWithTheRun(signal: Int32, name: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.fixture), "swift build --product http-fixture")
        let results = try runTrials("\(name) during a server case under load") { _ in
            let trial = try Trial()
            guard let port = LocalPorts.free() else { throw FaultError("no free port") }
            let scenario = try trial.scenario(
                """
                scenario: fault-server
                workload: command
                strategies:
                  - name: fixture
                    command: [\(Self.fixture), "\(port)"]
                    ready: {port: "\(port)"}
                    steps:
                      - load: {connections: 2, duration: 30s}
                repetitions: 1

                """)
            let run = try trial.start(["run", scenario, "--out", trial.out])
            guard
                Deadline.poll(
                    seconds: 60, interval: 0.005,
                    {
                        ProcessTable.processes(marked: trial.marker).contains {
                            $0.commandLine.contains("memharness-load")
                        }
                    })
            else { throw FaultError("the load never started: \(trial.stderrText)") }
            let struck = Deadline.now
            run.send(signal)
            let ending = try run.finish(within: 10, name)
            let interrupted = signal != SIGKILL
            var findings = trial.judge(
                run, ending: ending, elapsed: Double(Deadline.now - struck) / 1e9,
                Expectation(
                    endings: [interrupted ? .exited(128 + signal) : .signaled(SIGKILL)],
                    withinSeconds: interrupted ? 2 : nil, folder: [.absent], grace: interrupted ? 1 : 3,
                    message: interrupted ? "interrupted by \(name)" : nil))
            // Once nothing of the run is left, the port takes a new listener.
            if !Deadline.poll(seconds: 3, { LocalPorts.canListen(on: port) }) {
                findings.0.orphans.append("port \(port) is still taken after \(name)")
            }
            return findings
        }
        #expect(results.problems == [])
    }
}
