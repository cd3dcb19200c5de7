import ArgumentParser
import Foundation
import HarnessModel
import Measurement
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
        // The workloads' descriptors are read here first (their statics made): the harness's reading, in its mode.
        switch Agent.asHarness({ Result { () throws(CatalogError) in try WorkloadCatalog(validating: workloads) } }) {
        case .success(let validated): catalog = validated
        case .failure(let error):
            Terminal.error(error.description)
            exit(ExitStatus.usage.code)
        }
        CommandContext.$programName.withValue(ProgramName.of(CommandLine.arguments.first)) {
            if let problem = HelpTopics.problem(arguments ?? Array(CommandLine.arguments.dropFirst())) {
                Terminal.error(problem)
                exit(ExitStatus.usage.code)
            }
            CommandContext.$catalog.withValue(catalog) {
                MemHarnessCommand.main(arguments)
            }
        }
        exit(ExitStatus.ok.code)
    }
}

/// What the commands share for one invocation.
enum CommandContext {
    /// The workloads this executable knows.
    @TaskLocal static var catalog = WorkloadCatalog([])
    /// The name the user runs this executable by (`json-cache-harness`), for help and usage.
    @TaskLocal static var programName = ProgramName.standard
}

/// The name help and usage give the program: the executable the user ran, not always `memharness`.
enum ProgramName {
    /// The shipped executable's name, and the name when the process's own is unknown.
    static let standard = "memharness"

    /// The last component of `argumentZero` (argv[0]); `standard` when there is none.
    static func of(_ argumentZero: String?) -> String {
        let name = argumentZero?.split(separator: "/").last.map(String.init) ?? ""
        return name.isEmpty ? standard : name
    }
}

struct MemHarnessCommand: ParsableCommand {
    // Computed: the root's name is the executable's (a package's own harness is not `memharness`).
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: CommandContext.programName,
            abstract:
                "Runs memory scenarios under several strategies, measures them with jemalloc, and ranks the strategies by "
                + "their peak memory (or the figure each scenario ranks by).",
            discussion: ExitStatus.summary
                + " A report folder is replaced in one step: it always holds one complete run.",
            version: MemHarness.version,
            subcommands: [
                RunCommand.self, ProfileCommand.self, ReportCommand.self, CompareCommand.self, BaselineCommand.self,
                MergeCommand.self, ListCommand.self, HistoryCommand.self, RunCaseCommand.self, ExactCheckCommand.self,
            ]
        )
    }
}

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List workloads with their strategies, parameters (defaults and units), steps and gauges."
    )

    func run() { Terminal.result(WorkloadListing.render(CommandContext.catalog)) }
}
