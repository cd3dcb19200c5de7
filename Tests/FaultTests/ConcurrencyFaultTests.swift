import Foundation
import Testing

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Two runs into the same `--out`: the one that comes second while the first holds the folder exits 75 at
/// once with a clear message and starts no case; the first completes and its report is whole.
@Suite(.serialized, .timeLimit(.minutes(30)))
struct ConcurrencyFaultTests {
    @Test func aSecondRunIntoTheSameFolderExits75AndTheFirstCompletes() throws {
        let results = try runTrials("two runs into one --out") { index in
            let trial = try Trial()
            if index % 2 == 0 { try trial.placePrevious() }
            let scenario = try trial.scenario(Scenarios.slow(seconds: 2))
            let first = try trial.start(["run", scenario, "--out", trial.out, "--quiet"])
            // The first holds the lock from before its first case to after its write: start the second while the
            // first's 2 s case runs, at a random point of its first half second.
            guard Deadline.poll(seconds: 60, interval: 0.001, { Striker(trial: trial, run: first).caseStarted }) else {
                throw FaultError("the first run started no case: \(trial.stderrText)")
            }
            usleep(UInt32.random(in: 0...500_000))
            let secondErr = "\(trial.root)/second-stderr.txt"
            let started = Deadline.now
            let second = try trial.start(
                ["run", scenario, "--out", trial.out], stdout: .file("\(trial.root)/second-stdout.txt"),
                stderr: .file(secondErr))
            let secondEnding = try second.finish(within: 30, "the second run")
            let secondSeconds = Double(Deadline.now - started) / 1e9
            // It removed its own working folder before it exited (not left to its guard).
            let secondResidue = trial.residue(of: second.pid).filter { !$0.hasPrefix(trial.reports) }
            let firstEnding = try first.finish(within: 60, "the first run")
            var (findings, outcome) = trial.judge(
                first, ending: firstEnding, elapsed: nil,
                Expectation(endings: [.exited(0)], withinSeconds: nil, folder: [.complete]), others: [second.pid])
            // No file: the second run wrote nothing, which the check below reports.
            let message = (try? String(contentsOfFile: secondErr, encoding: .utf8)) ?? ""
            if secondEnding != .exited(75) {
                findings.wrongExits.append("the second run ended with \(secondEnding), expected exit 75: \(message)")
            }
            if !message.contains("\(trial.out) is being written by another memharness run") {
                findings.silentLosses.append("the second run's stderr does not say the folder is locked: \(message)")
            }
            // "At once": before any case; the first's case alone lasts 2 s, and it was running when the second started.
            if secondSeconds > 1.5 { findings.wrongExits.append("the second run took \(secondSeconds) s to give up") }
            if !secondResidue.isEmpty {
                findings.residue.append("the locked-out run exited with its working folder left: \(secondResidue)")
            }
            outcome += ", second locked out"
            return (findings, outcome)
        }
        #expect(results.problems == [])
    }
}
