import ArgumentParser
import Foundation
import HarnessModel
import Runner
import WorkloadKit

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
        ProcessStart.prepareStandardStreams()
        let catalog: WorkloadCatalog
        do {
            catalog = try WorkloadCatalog(validating: workloads)
        } catch {
            Terminal.error(error.description)
            exit(ExitStatus.usage.code)
        }
        if let problem = HelpTopics.problem(arguments ?? Array(CommandLine.arguments.dropFirst())) {
            Terminal.error(problem)
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
            MergeCommand.self, ListCommand.self, HistoryCommand.self, RunCaseCommand.self, ExactCheckCommand.self,
        ]
    )
}

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List workloads with their strategies, parameters (defaults and units), steps and gauges."
    )

    func run() { Terminal.result(WorkloadListing.render(CommandContext.catalog)) }
}
