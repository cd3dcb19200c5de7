import ArgumentParser
import HarnessModel
import Runner
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
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
        // A closed pipe on stdout or stderr must fail a write, not kill the run before its report is written;
        // a file-size limit (`ulimit -f`) must fail the write with EFBIG (exit 74), not kill the run mid-write.
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
        reopenClosedStandardDescriptors()
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

/// Gives a closed stdin, stdout or stderr (a shell's `>&-`) /dev/null. Left closed, its number would go to
/// the first file the run opens (its lock, a report file), and a message meant for the terminal would land in it.
private func reopenClosedStandardDescriptors() {
    // A plain loop, not a range: case processes run this too, and iterating a range instantiates generic
    // metadata (allocated, in a debug build), which moved the thread-cache state their figures start from.
    var descriptor: Int32 = 0
    while descriptor <= 2 {
        if fcntl(descriptor, F_GETFD) < 0 && errno == EBADF {
            // Lower numbers are open by now, so open() returns this one.
            let null = open("/dev/null", O_RDWR)
            if null >= 0 && null != descriptor {
                dup2(null, descriptor)
                close(null)
            }
        }
        descriptor += 1
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
