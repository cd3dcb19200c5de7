import Foundation

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// What one trial of a fault found wrong, by kind (empty when the harness held up).
struct Findings {
    /// Processes of the run still alive after it ended (and after the guard's grace).
    var orphans: [String] = []
    /// A report folder that is not one complete run.
    var mixed: [String] = []
    /// Temporary files left: the run's working folder, a staging folder, the lock.
    var residue: [String] = []
    /// A report lost without a word: the previous one gone with no new one, or a success claimed without it.
    var silentLosses: [String] = []
    /// An exit code other than the documented one, or an end later than allowed.
    var wrongExits: [String] = []

    var all: [String] { orphans + mixed + residue + silentLosses + wrongExits }
    var isEmpty: Bool { all.isEmpty }
}

extension [Findings] {
    /// Every finding of every trial, numbered by trial.
    var problems: [String] {
        enumerated().flatMap { index, findings in findings.all.map { "trial \(index + 1): \($0)" } }
    }
}

/// The trials of each fault: one for `make test`, `MEMHARNESS_SOAK_TRIALS` for `make soak`, which also sets
/// `MEMHARNESS_SOAK_TABLE` to a file each fault appends its row of counts to.
enum Soak {
    /// Trials per fault.
    static var trials: Int {
        ProcessInfo.processInfo.environment["MEMHARNESS_SOAK_TRIALS"].flatMap { Int($0) }.map { max(1, $0) } ?? 1
    }

    /// Appends the fault's row to the soak table (when `make soak` asked for one): trials and the count of
    /// trials with each kind of finding, and what the trials ended with.
    static func record(_ fault: String, _ results: [Findings], outcomes: [String: Int]) {
        guard let path = ProcessInfo.processInfo.environment["MEMHARNESS_SOAK_TABLE"], !path.isEmpty else { return }
        func count(_ kind: KeyPath<Findings, [String]>) -> Int { results.filter { !$0[keyPath: kind].isEmpty }.count }
        let ended = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let cells = [
            fault, "\(results.count)", "\(count(\.orphans))", "\(count(\.mixed))", "\(count(\.residue))",
            "\(count(\.silentLosses))", "\(count(\.wrongExits))", ended,
        ]
        let line = "| " + cells.joined(separator: " | ") + " |\n"
        // O_APPEND and one write: rows of faults never interleave.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = line.utf8CString.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count - 1) }
    }
}

/// The run ended before the moment a trial meant to strike at (a report written faster than the test could
/// see it): the fault was not injected, so the trial is run again.
struct MissedMoment: Error {}

/// Runs `trials` trials of one fault, expects each to find nothing, and records the fault's row.
///
/// `body` runs one trial (its index given) and returns what it found and a word for how it ended
/// ("kept previous", "new complete", ...), which the soak table counts. A trial that missed its moment is run
/// again, at most 5 times; the misses are counted too.
func runTrials(_ fault: String, trials: Int = Soak.trials, _ body: (Int) throws -> (Findings, String)) throws
    -> [Findings]
{
    var results: [Findings] = []
    var outcomes: [String: Int] = [:]
    for index in 0..<trials {
        var attempt: (Findings, String)?
        for _ in 0..<5 where attempt == nil {
            do {
                attempt = try body(index)
            } catch is MissedMoment {
                outcomes["missed the moment and ran again", default: 0] += 1
            }
        }
        guard let (findings, outcome) = attempt else {
            throw FaultError("\(fault): five runs in a row ended before the moment of the fault")
        }
        results.append(findings)
        outcomes[outcome, default: 0] += 1
        if !findings.isEmpty {
            print("\(fault), trial \(index + 1): \(findings.all.joined(separator: "; "))")
        }
    }
    Soak.record(fault, results, outcomes: outcomes)
    return results
}
