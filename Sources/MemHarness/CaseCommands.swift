import ArgumentParser
import HarnessModel
import Measurement
import Runner

/// The case process: reads a spec, runs it in this process, writes the outcome (`CaseProcess`). Not for
/// people; the protocol is described in the `RunnerCaseProtocol` article (Sources/MemHarness/MemHarness.docc).
struct RunCaseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "_run-case",
        abstract: "Run one case in this process (used by `run`; not for direct use).",
        shouldDisplay: false
    )

    @Option(help: "The case spec (JSON).") var spec: String
    @Option(help: "Where to write the outcome (JSON).") var result: String
    @Option(help: "A scratch directory for the case's files.") var scratch: String
    @Option(help: "A file for the sampler's rows, which survive the process.") var samples: String?
    @Option(help: "Where an attributed case writes the agent's record of allocation stacks.") var record: String?
    @Flag(help: "Skip the check that jemalloc is the process allocator (valgrind replaces it; its figures are moot).")
    var noAllocatorCheck = false

    func run() throws {
        let process = CaseProcess(
            specFile: spec, resultFile: result, scratchDirectory: scratch, sampleFile: samples, recordFile: record,
            checkAllocator: !noAllocatorCheck)
        let end = process.run(catalog: CommandContext.catalog, report: Terminal.error)
        if let message = end.message { Terminal.error(message) }
        if end.code != CaseExitCode.done { throw ExitCode(end.code) }
    }
}

/// `_exact-check`: shows that this binary counts every allocation exactly. Not for people; tests run it.
struct ExactCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "_exact-check",
        abstract: "Call every entry point of the malloc family and show how the exact count moved (agent preloaded).",
        shouldDisplay: false
    )

    func run() throws {
        guard var rows = Agent.selfCheck() else {
            throw Terminal.fail(Agent.notCountingError.description, status: .caseFailed)
        }
        rows.append(Agent.swiftArrayRow())
        Terminal.result(Agent.selfCheckTable(rows))
        if rows.contains(where: { !$0.isConsistent }) { throw ExitCode(ExitStatus.caseFailed.code) }
    }
}
