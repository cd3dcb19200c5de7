import ArgumentParser
import HarnessModel
import Runner
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// The memharness command line over a catalog of workloads: what a package calls from its own `main`.
///
/// ```swift
/// import MemHarness
/// MemHarness.main(workloads: [JSONCacheWorkload()])
/// ```
/// gives that package's executable every command of `memharness` (run, list, report, compare,
/// baseline, merge, profile) over its own workloads; the shipped `memharness` is the same call with
/// the built-in workloads.
public enum MemHarness {
    /// The tool's version, as `--version` prints it.
    public static let version = "0.2.0"

    /// Parses the command line (`arguments`, default: the process's) and runs it over `workloads`,
    /// then exits with the documented status. A catalog that does not hold together (a workload
    /// registered twice, two strategies of one name) ends the process with status 64 before anything runs.
    public static func main(workloads: [any Workload], arguments: [String]? = nil) -> Never {
        // A closed pipe on stdout or stderr must fail a write, not kill the run before its report is written.
        signal(SIGPIPE, SIG_IGN)
        let catalog: WorkloadCatalog
        do {
            catalog = try WorkloadCatalog(validating: workloads)
        } catch {
            Terminal.error(error.description)
            exit(ExitStatus.usage.code)
        }
        CommandContext.$catalog.withValue(catalog) {
            MemHarnessCommand.main(arguments)
        }
        exit(ExitStatus.ok.code)
    }
}

/// What the commands share for one invocation.
enum CommandContext {
    /// The workloads this executable knows.
    @TaskLocal static var catalog = WorkloadCatalog([])
}

/// The root command.
struct MemHarnessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memharness",
        abstract:
            "Runs memory scenarios under several strategies, measures them with jemalloc, and ranks the strategies by "
            + "their peak memory (or the figure each scenario ranks by).",
        discussion: ExitStatus.summary + " A report folder is replaced in one step: it always holds one complete run.",
        version: MemHarness.version,
        subcommands: [
            RunCommand.self, ProfileCommand.self, ReportCommand.self, CompareCommand.self, BaselineCommand.self,
            MergeCommand.self,
            ListCommand.self, RunCaseCommand.self, ExactCheckCommand.self,
        ]
    )
}

extension String {
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
