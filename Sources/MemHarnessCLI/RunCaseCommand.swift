import ArgumentParser
import Foundation
import HarnessCore
import Workloads

/// The child side of a case: reads a spec, runs it in this process, writes the result. Not for people.
struct RunCaseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "_run-case",
        abstract: "Run one case in this process (used by `run`; not for direct use).",
        shouldDisplay: false
    )

    @Option(help: "The case spec (JSON).")
    var spec: String

    @Option(help: "Where to write the result (JSON).")
    var result: String

    @Option(help: "A scratch directory for the case's files.")
    var scratch: String

    @Flag(name: .customLong("no-allocator-check"),
          help: "Skip the check that jemalloc is the process allocator (for a case run under valgrind, which replaces it; jemalloc's figures are then meaningless).")
    var noAllocatorCheck = false

    func run() throws {
        let caseSpec: CaseSpec
        do {
            caseSpec = try JSONDecoder().decode(CaseSpec.self, from: Data(contentsOf: URL(fileURLWithPath: spec)))
        } catch {
            Terminal.error("cannot read case spec \(spec): \(error)")
            throw ExitCode(CaseExitCode.harnessFailure)
        }
        let resultPath = result
        do {
            let outcome = try CaseExecutor(catalog: .builtIn).run(caseSpec, scratchDirectory: scratch, checkAllocator: !noAllocatorCheck) { killed in
                // On the sampler thread, while the workload still runs: write the result and end the
                // process at once, as a phone kills an app over its budget.
                do {
                    try JSONEncoder().encode(killed).write(to: URL(fileURLWithPath: resultPath))
                    _exit(CaseExitCode.memoryLimit)
                } catch {
                    Terminal.error("cannot write the result \(resultPath): \(error)")
                    _exit(CaseExitCode.harnessFailure)
                }
            }
            try JSONEncoder().encode(outcome).write(to: URL(fileURLWithPath: result))
        } catch let error as HarnessError {
            Terminal.error(error.description)
            throw ExitCode(CaseExitCode.harnessFailure)
        }
    }
}
