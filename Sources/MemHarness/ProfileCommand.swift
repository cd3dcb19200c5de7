import ArgumentParser
import HarnessModel
import Runner
import Scenarios

struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Run any dynamically linked program as one case and write the same report folder.",
        discussion: """
            The program runs with the memharness agent and jemalloc preloaded: the agent's sampler records \
            jemalloc's figures inside it, --peak exact counts every allocation, --attribute records where the \
            memory is. Its exit status and the tail of its stderr are in its row. A statically linked program \
            (or one with an allocator of its own, such as Go's) cannot be seen and is refused.
            """
    )

    @Option(name: .long, help: ArgumentHelp("Folder the report is written to.", valueName: "dir"))
    var out = "Reports/profile"

    @Option(
        name: .long,
        help: ArgumentHelp("The scenario's name in the report (default: the program's name).", valueName: "name"))
    var name: String?

    @Option(name: .customLong("repeat"), help: ArgumentHelp("Runs of the program.", valueName: "n"))
    var repetitions = 1

    @Option(name: .long, help: ArgumentHelp("Sampling interval inside the program, e.g. 1ms.", valueName: "duration"))
    var interval = DurationArgument(.milliseconds(1))

    @Option(name: .long, help: ArgumentHelp("Time limit per run.", valueName: "duration"))
    var timeout = DurationArgument(.seconds(600))

    @Option(name: .long, help: ArgumentHelp("sampled (default), or exact: count every allocation.", valueName: "mode"))
    var peak: PeakMode?

    @Flag(name: .long, help: "Also record allocation stacks: top sites, a flame graph, folded stacks and pprof.")
    var attribute = false

    @Option(name: .long, help: ArgumentHelp("Mean bytes between sampled allocation stacks.", valueName: "size"))
    var stackSample = SizeArgument(AttributionRequest.defaultSampleMeanBytes)

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("-- PROGRAM [ARGS...]", valueName: "program"))
    var command: [String] = []

    func validate() throws {
        // The passthrough argument takes every word from the first one it does not know, --help included.
        if let first = command.first, ["--help", "-h", "-help"].contains(first) { throw CleanExit.helpRequest(self) }
        guard !words.isEmpty else {
            throw ValidationError("give the program to run after --, e.g. memharness profile -- ./prog")
        }
        guard (1...100).contains(repetitions) else { throw ValidationError("--repeat must be 1...100") }
    }

    /// The command line without the `--` that separates it.
    var words: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

    func run() throws {
        let invocation: ProgramInvocation
        do {
            let executable = try ProgramCheck.resolve(words[0])
            invocation = ProgramInvocation(executable: executable, arguments: Array(words.dropFirst()))
        } catch {
            throw Terminal.fail(error.description, status: .usage)
        }
        var request = RunRequest()
        request.inlineScenarios = [
            .program(
                invocation,
                name: name ?? invocation.executable.split(separator: "/").last.map(String.init) ?? "program",
                repetitions: repetitions, timeout: timeout.duration)
        ]
        request.options = RunOptions(interval: interval.duration)
        request.options.peakMode = peak
        request.options.attribution = attribute ? AttributionRequest(sampleMeanBytes: stackSample.bytes) : nil
        let progress = ProgressDisplay(quiet: false, verbose: false)
        do {
            let outcome = try RunSession.run(
                request, catalog: CommandContext.catalog, launcher: ProcessCaseLauncher.forCurrentBinary(),
                output: RunOutput(directory: out), toolVersion: MemHarness.version, events: progress.show)
            progress.end()
            Terminal.result(Publishing.profileSummary(outcome.record.report, folder: out))
            Publishing.reportCasesThatDidNotComplete(outcome.record.report)
            try Publishing.finish(outcome, folder: out)
        } catch let error as RunSessionError {
            progress.end()
            throw Terminal.fail(error.description, status: error.exitStatus)
        }
    }
}
