import ArgumentParser
import Foundation
import HarnessModel
import Measurement
import Runner

#if os(Linux)
    import Glibc
#endif

/// The case process: reads a spec, runs it in this process, writes the outcome. Not for people; the
/// protocol is described in the `RunnerCaseProtocol` article (Sources/MemHarness/MemHarness.docc).
struct RunCaseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "_run-case",
        abstract: "Run one case in this process (used by `run`; not for direct use).",
        shouldDisplay: false
    )

    @Option(help: "The case spec (JSON).")
    var spec: String

    @Option(help: "Where to write the outcome (JSON).")
    var result: String

    @Option(help: "A scratch directory for the case's files.")
    var scratch: String

    @Option(help: "A file for the sampler's rows, which survive the process.")
    var samples: String?

    @Option(help: "Where an attributed case writes the agent's record of allocation stacks.")
    var record: String?

    @Flag(
        name: .customLong("no-allocator-check"),
        help: ArgumentHelp(
            "Skip the check that jemalloc is the process allocator (for a case run under valgrind, which replaces "
                + "it; jemalloc's figures are then meaningless)."))
    var noAllocatorCheck = false

    func run() throws {
        let caseSpec: CaseSpec
        do {
            caseSpec = try JSONDecoder().decode(CaseSpec.self, from: Data(contentsOf: URL(fileURLWithPath: spec)))
        } catch {
            throw Terminal.fail("cannot read case spec \(spec): \(error)", status: .caseFailed)
        }
        // The case enforces its own time limit too, a little after the runner's: should the runner be gone
        // without its death reaching us, the case still ends (SIGALRM's default action ends the process).
        alarm(UInt32(clamping: caseSpec.timeoutNanoseconds / 1_000_000_000 + 30))
        let resultPath = result
        let environment = CaseEnvironment(
            scratchDirectory: scratch, sampleFile: samples, recordFile: record, checkAllocator: !noAllocatorCheck,
            onMemoryLimit: { killed in
                // On the sampler thread, while the workload still runs: write the outcome and end the
                // process at once, as a phone kills an app over its budget.
                Glibc.exit(Self.write(killed, to: resultPath) ? CaseExitCode.memoryLimit : CaseExitCode.harnessFailure)
            })
        do {
            let outcome = try CaseExecutor(catalog: CommandContext.catalog).run(caseSpec, in: environment)
            guard Self.write(outcome, to: result) else { throw ExitCode(CaseExitCode.harnessFailure) }
        } catch let error as MeasurementError {
            throw Terminal.fail(error.description, status: .caseFailed)
        }
    }

    /// Writes `outcome` as JSON; false (with the reason on stderr) when it cannot.
    static func write(_ outcome: CaseOutcome, to path: String) -> Bool {
        do {
            try JSONEncoder().encode(outcome).write(to: URL(fileURLWithPath: path))
            return true
        } catch {
            Terminal.error("cannot write the result \(path): \(error)")
            return false
        }
    }
}
