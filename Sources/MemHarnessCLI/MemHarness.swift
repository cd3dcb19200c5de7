import ArgumentParser
import Foundation
import HarnessModel
import HarnessCore
import Workloads

/// The `memharness` command: runs scenarios, lists workloads, and the hidden per-case child.
///
/// The executables are one line each (`MemHarness.main()`), so a package can build its own
/// harness binary on this library.
public struct MemHarness: ParsableCommand {
    /// The tool's version, as `--version` prints it.
    public static let version = "0.1.0"

    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "memharness",
        abstract: "Runs memory scenarios under several strategies, measures them with jemalloc, and ranks the strategies by peak memory.",
        discussion: """
        Exit codes: 0 every case completed and every check passed; 1 harness failure (a case crashed, \
        failed or timed out, or measuring was impossible); 2 a finding: a threshold breached, a regression \
        against the baseline, an unexpected leak; 64 usage error (bad option, bad scenario or baseline file), \
        before anything runs. Reports are written atomically: an earlier report is never half-overwritten.
        """,
        version: version,
        subcommands: [RunCommand.self, ReportCommand.self, CompareCommand.self, BaselineCommand.self, MergeCommand.self, ListCommand.self, RunCaseCommand.self, ExactCheckCommand.self],
        defaultSubcommand: nil
    )
}

/// Exit codes of the command line, as documented in the README.
enum ExitCodes {
    static let ok: Int32 = 0
    static let harnessFailure: Int32 = 1
    static let finding: Int32 = 2
    static let usage: Int32 = 64
}

/// A duration option value such as `1ms`, `500us`, `2s`.
struct DurationArgument: ExpressibleByArgument, Sendable {
    var duration: Duration

    init?(argument: String) {
        guard let nanoseconds = Units.parseDurationNanoseconds(argument) else { return nil }
        duration = .nanoseconds(nanoseconds)
    }

    init(_ duration: Duration) {
        self.duration = duration
    }

    /// The shortest exact spelling: `1ms`, `500us`, `2s`.
    var defaultValueDescription: String {
        let nanoseconds = duration.nanoseconds
        for (unit, scale) in [("s", Int64(1_000_000_000)), ("ms", 1_000_000), ("us", 1_000)] where nanoseconds % scale == 0 && nanoseconds >= scale {
            return "\(nanoseconds / scale)\(unit)"
        }
        return "\(nanoseconds)ns"
    }
}
