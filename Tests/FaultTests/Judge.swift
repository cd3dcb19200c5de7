import Foundation

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// What a trial allows the report folder to hold after the fault.
enum Allowed: Hashable {
    case absent
    case previous
    case complete
}

/// How a disturbed run must end, and what it may leave.
struct Expectation {
    /// The endings that are right (one exit code, or a signal for a process killed before it could act).
    var endings: [Ending]
    /// The most seconds from the fault to the end; nil: no bound beyond the trial's own.
    var withinSeconds: Double?
    /// What the report folder may hold.
    var folder: Set<Allowed>
    /// Seconds the run's processes and temporary files get to disappear after it ended (the guard's time
    /// after a kill -9; a run that ends on its own cleans up before it exits).
    var grace: Double = 1
    /// Text stderr must hold when the run ended with an exit code other than 0.
    var message: String?
}

extension Trial {
    /// Judges run `run` after a fault: its end, the report folder, and what it left; also returns a word for how
    /// the folder ended ("kept previous", "new complete", "absent"), for the soak table.
    func judge(_ run: HarnessProcess, ending: Ending, elapsed: Double?, _ expected: Expectation, others: [pid_t] = [])
        -> (Findings, String)
    {
        var findings = Findings()
        if !expected.endings.contains(ending) {
            findings.wrongExits.append("ended with \(ending); expected \(expected.endings.map { "\($0)" })")
        }
        if let limit = expected.withinSeconds, let elapsed, elapsed > limit {
            findings.wrongExits.append("ended \(String(format: "%.2f", elapsed)) s after the fault; allowed \(limit) s")
        }
        if case .exited(let code) = ending, code != 0 {
            let text = stderrText
            if let message = expected.message, !text.contains(message) {
                findings.silentLosses.append("exit \(code) without '\(message)' on stderr: \(text.suffix(400))")
            }
        }
        let verdict = verdict()
        let outcome: String
        switch verdict {
        case .absent:
            outcome = "absent"
            if previous != nil { findings.silentLosses.append("the previous report is gone and no new one is there") }
        case .previous: outcome = "kept previous"
        case .complete: outcome = "new complete"
        case .mixed(let reason):
            outcome = "mixed"
            findings.mixed.append(reason)
        }
        let kind: Allowed? =
            switch verdict {
            case .absent: .absent
            case .previous: .previous
            case .complete: .complete
            case .mixed: nil
            }
        if let kind, !expected.folder.contains(kind) {
            findings.silentLosses.append("the folder holds \(verdict) after \(ending)")
        }
        if case .exited(let code) = ending, [0, 1, 2].contains(code), kind != .complete {
            findings.silentLosses.append("exit \(code) says the report was written, but the folder holds \(verdict)")
        }
        let left = leftovers(of: [run.pid] + others, within: expected.grace)
        findings.orphans = left.processes
        findings.residue = left.files
        // The journal stays only for a run stopped before its report was complete: with the cases it finished.
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: journal)) ?? []
        if case .exited(let code) = ending, [0, 1, 2].contains(code), !kept.isEmpty {
            findings.residue.append("\(journal) left by a run that wrote its report")
        } else if !kept.isEmpty, !kept.contains(where: { $0.hasPrefix("case-") }) {
            findings.residue.append("\(journal) holds no finished case: \(kept)")
        }
        return (findings, outcome)
    }
}
