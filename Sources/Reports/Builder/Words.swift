import HarnessModel

// The words of model values that carry no prose of their own: the one place each is worded, as a phrase the
// builder puts in the document (report.md, the page, the terminal alike), or as text for the terminal and the CSV.
// Typed verdict reasons and case failures get their words here too.

/// A strategy the memory limit stopped.
enum KillWords {
    /// `killed by memory limit at 0.71 s, 256.40 MiB` (medians when several were).
    static func phrase(_ kills: MemoryLimitKills) -> Phrase {
        "killed by memory limit at \(Value.number(kills.medianKilledAtMilliseconds / 1000, decimals: 2)) s, "
            + "\(Value.bytes(kills.medianFootprintBytes))"
            + (kills.killedCount > 1 ? " (median of \(kills.killedCount))" : "")
    }
}

extension CaseFailure {
    /// Why a case did not complete, in plain words: the message of a workload or of the harness as it came, else
    /// `stopped after the 2 min case timeout`, `killed by signal 6 (SIGABRT): …`, `killed by memory limit at 1.42 s,
    /// 300.40 MiB allocated (limit 300.00 MiB), after 1 memory warning`.
    public var text: String {
        switch self {
        case .workload(let reason), .notMeasured(let reason): return reason
        case .timeout(let limit): return "stopped after the \(Units.formatDuration(nanoseconds: limit)) case timeout"
        case .crash(let crash):
            return "killed by signal \(crash.signal) (\(crash.signalName))"
                + (crash.message.isEmpty ? "" : ": \(crash.message)")
        case .memoryLimit(let hit):
            var text =
                "killed by memory limit at \(Units.fixed(Double(hit.timeNanoseconds) / 1e9, decimals: 2)) s, "
                + "\(Units.formatBytes(hit.footprintBytes)) \(hit.footprint.rawValue) "
                + "(limit \(Units.formatBytes(hit.limitBytes)))"
            if hit.warningsBefore > 0 {
                text += ", after \(hit.warningsBefore) memory warning\(hit.warningsBefore == 1 ? "" : "s")"
            }
            return text
        }
    }
}

extension CaseResult {
    /// Why the case did not complete, in plain words (`CaseFailure.text`); nil when it completed.
    public var failureText: String? { failure?.text }
}

/// The words of the checks section (report.md, the step summary, the terminal's check table).
enum CheckWords {
    /// The section's heading in report.md and on the terminal.
    static let title: Phrase = "Checks"
    /// What the terminal shows for a run without checks.
    static let noChecks = "No checks: the scenarios state no thresholds and no baseline was given."

    /// A check's status cell: `✅ PASS` or `❌ FAIL`.
    static func status(passed: Bool) -> Phrase { passed ? "✅ PASS" : "❌ FAIL" }

    /// `41 passed, 2 failed.`
    static func counts(passed: Int, failed: Int) -> Phrase { "\(passed) passed, \(failed) failed." }

    /// A failed check's full message: `FAIL: hold-large.peakAllocated = 4.00 MiB breaks …`.
    static func failure(_ message: String) -> Phrase { "FAIL: \(message)" }
}
