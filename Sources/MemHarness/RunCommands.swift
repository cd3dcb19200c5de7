import ArgumentParser
import FileIO
import Foundation
import HarnessModel
import Reports
import Runner
import Scenarios

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract:
            "Run scenarios and write the report folder (report.md, report.html, summary.csv, samples.csv, run.json, "
            + "charts).",
        discussion: """
            Each case (scenario x strategy x repetition) runs in its own child process. Every input is \
            checked before any case runs. With no SCENARIO, every Scenarios/*.yaml is run. Options override \
            what the scenario files say (repetitions, timeout, peak, memoryLimit, memoryWarning).
            """
    )

    @Argument(help: .value("scenario", "Scenario files (.yaml) or names; default: every file in --scenarios-dir."))
    var scenarios: [String] = []
    @Option(help: .value("dir", "Folder the report is written to.")) var out = "Reports/latest"
    @OptionGroup(title: "Running") var running: RunningOptions
    @OptionGroup(title: "Measuring") var measuring: MeasuringOptions
    @OptionGroup(title: "Gating") var gate: GateOptions
    @OptionGroup(title: "Memory budget") var memory: MemoryBudgetArguments
    @OptionGroup(title: "Output") var display: DisplayOptions

    func run() throws {
        let baseline = try gate.prepare()
        var request = try running.request(scenarios: scenarios, memory: memory.options(), measuring: measuring)
        request.options.suppressions = try measuring.loadSuppressions()
        let policy = gate.policy(checkThresholds: !running.quick, failOnMemoryLimit: memory.failOnMemoryLimit)
        let output = RunOutput(directory: out, rendering: running.rendering, gate: policy, baseline: baseline)
        let outcome = try Publishing.run(request, output: output, display: display)
        try Publishing.publish(outcome.record, folder: out, gate: gate)
        try Publishing.finish(outcome, folder: out, showTime: !display.quiet, quick: running.quick)
    }
}

/// `--quiet` and `--verbose`: how much progress `run` and `profile` show on stderr.
struct DisplayOptions: ParsableArguments {
    @Flag(help: "No progress on stderr (it is also off when stderr is not a terminal).") var quiet = false
    @Flag(help: "A line on stderr per finished case, even when stderr is not a terminal.") var verbose = false

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose contradict each other; give one") }
    }
}

/// What `run` and `profile` measure besides the footprint: how often it is sampled, exact peaks, allocation stacks.
struct MeasuringOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: .value(
            "duration",
            "Sampling interval, e.g. 1ms, 500us; 0ms turns sampling off (default: 1ms, 10ms for a server under load)."))
    var interval: DurationArgument?
    @Option(
        help: .value("mode", "sampled (default), or exact: also count every allocation for exact peaks (per phase)."))
    var peak: PeakMode?
    @Flag(
        help: ArgumentHelp(
            "Also record where the memory is: one more case per strategy samples allocation stacks (never gating) "
                + "for top sites, flame graphs, folded stacks and pprof profiles."))
    var attribute = false
    @Option(help: .value("size", "Mean bytes between sampled allocation stacks with --attribute (Poisson, by bytes)."))
    var stackSample = SizeArgument(AttributionRequest.defaultSampleMeanBytes)
    @Flag(
        help: ArgumentHelp(
            "Also record why memory is kept: that extra case captures the heap as a graph after every repeat "
                + "iteration and after teardown, a program's at its exit (leaks by reachability, cycles, retaining "
                + "paths, types)."))
    var heapGraph = false
    @Option(help: .value("type", "With --heap-graph: a type whose shortest retaining path to report (repeatable)."))
    var retainedBy: [String] = []
    @Option(
        help: .value(
            "file", "Known leaks (signatures or types, each with a reason; YAML) left out of leak verdicts."))
    var suppressions: String?
    @Option(
        help: .value(
            "name",
            "The malloc programs run on, over their strategies' allocator: jemalloc (preloaded; the default) or glibc "
                + "(mallinfo2, its heaps); glibc runs programs only (workload: command, servers, profile)."))
    var allocator: Allocator?

    func validate() throws {
        try ValidationError.check(
            OptionRanges.problem(interval: interval?.duration, stackSampleBytes: stackSample.bytes))
        if !retainedBy.isEmpty && !heapGraph {
            throw ValidationError(
                "--retained-by \(retainedBy[0]) needs --heap-graph: only a heap graph has retaining paths")
        }
    }

    /// `--heap-graph` as the request it makes.
    var heapGraphRequest: HeapGraphRequest? { heapGraph ? HeapGraphRequest(retainedBy: retainedBy) : nil }

    /// The known leaks of `--suppressions`, read before any work; a bad file ends the command (exit 64).
    func loadSuppressions() throws -> [LeakSuppression] {
        guard let suppressions else { return [] }
        return try Terminal.orFail { () throws(ScenarioError) in try SuppressionsFile.load(suppressions) }
    }

    /// `--attribute` as the request for allocation stacks it makes.
    var attribution: AttributionRequest? { attribute ? AttributionRequest(sampleMeanBytes: stackSample.bytes) : nil }
}

/// The options of `run` that shape the cases.
struct RunningOptions: ParsableArguments {
    @Option(
        name: .customLong("repeat"), parsing: .unconditional,
        help: .value(
            "n|auto",
            "Repetitions per strategy: a count, or auto: until the 95% interval of each strategy's median is "
                + "within ±2% (6 to 15 times; a file's own auto settings stay)."))
    var repetitions: RepetitionPolicy?
    @Flag(help: "Smoke test: one repetition and every step duration divided by 4; thresholds are not checked.")
    var quick = false
    @Option(
        name: .customLong("set"),
        help: .value(
            "name=value",
            "Override a parameter (name=value) or step argument (step.argument=value); repeatable. Several values "
                + "(burst.duration=1s,2s,4s) make a sweep: peak per value and the growth slope."))
    var overrides: [String] = []
    @Option(help: .value("dir", "Folder searched for scenario names and for the default set."))
    var scenariosDir = "Scenarios"
    @Option(help: .value("n", "Rows per case in run.json and samples.csv (neighbours merged, maxima kept); 0: all."))
    var samplesMaxRows = 2000
    @Option(help: .value("scale", "Value scale of the charts: auto (log when peaks differ by over 30x), linear, log."))
    var chartScale: ChartScaleChoice = .auto
    @Option(
        parsing: .unconditional,
        help: .value("duration", "Time limit per case, \(OptionRanges.text(OptionRanges.timeout)), e.g. 30s."))
    var timeout: DurationArgument?
    @Option(
        help: .value(
            "i/n",
            "Run only shard I of N (a deterministic, round-robin subset of the cases), e.g. 2/4; `merge` joins them. "
                + "auto: the shard the CI engine names (GitLab, Buildkite, CircleCI; auto/N for a Kubernetes Indexed Job)."
        ))
    var shard: ShardChoice?
    @Option(help: .value("n", "Cases of `parallel: true` scenarios run this many at once; auto: the number of CPUs."))
    var jobs: JobCount = .auto
    @Flag(
        help: ArgumentHelp(
            "Continue the interrupted run into the same --out: run only the cases it did not finish (same "
                + "scenarios, --set values and options), then write the report of them all."))
    var resume = false

    func validate() throws {
        try ValidationError.check(
            OptionRanges.problem(
                repetitions: repetitions, timeout: timeout?.duration, samplesMaxRows: samplesMaxRows, jobs: jobs))
        if case .failure(let problem) = shard?.resolve(environment: ProcessInfo.processInfo.environment) {
            throw ValidationError(problem.description)
        }
    }

    /// The run these options ask for, measured as `measuring` says.
    func request(scenarios: [String], memory: MemoryOptions, measuring: MeasuringOptions) -> RunRequest {
        var request = RunRequest(scenarios: scenarios, scenariosDirectory: scenariosDir, overrides: overrides)
        request.options = RunOptions(
            interval: measuring.interval?.duration, repetitions: repetitions, quick: quick, memory: memory,
            peakMode: measuring.peak, timeout: timeout?.duration, attribution: measuring.attribution,
            jobs: jobs.resolved, resume: resume)
        request.options.heapGraph = measuring.heapGraphRequest
        request.options.allocator = measuring.allocator
        // `validate()` refused a shard that does not resolve.
        request.shard = try? shard?.resolve(environment: ProcessInfo.processInfo.environment).get()
        return request
    }

    var rendering: RenderingOptions { RenderingOptions(samplesMaxRows: samplesMaxRows, chartScale: chartScale.scale) }
}

struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Run any dynamically linked program as one case and write the same report folder.",
        discussion: """
            The program runs with the memharness agent and jemalloc preloaded (the agent alone with --allocator \
            glibc, on glibc's malloc): the agent's sampler records the allocator's figures inside it, --peak exact counts every allocation, --attribute records where the \
            memory is, --heap-graph captures its heap at exit and finds what no root reaches there (its leaks). \
            Its standard output and error pass through as it runs (those of the first run; later runs' and the \
            instrumented runs' stay in their case folders); memharness's own lines go to stderr. Its exit status and \
            the tail of its stderr are in its row. A statically linked program (or one with an allocator of its \
            own, such as Go's) cannot be seen and is refused.
            """
    )

    @Option(help: .value("dir", "Folder the report is written to.")) var out = "Reports/profile"
    @Option(help: .value("name", "The scenario's name in the report (default: the program's name).")) var name: String?
    @Option(
        name: .customLong("repeat"), parsing: .unconditional,
        help: .value("n", "Runs of the program, \(OptionRanges.text(OptionRanges.repetitions))."))
    var repetitions = 1
    @Option(
        parsing: .unconditional,
        help: .value("duration", "Time limit per run, \(OptionRanges.text(OptionRanges.timeout))."))
    var timeout = DurationArgument(.seconds(600))
    @OptionGroup(title: "Measuring") var measuring: MeasuringOptions
    @OptionGroup(title: "Output") var display: DisplayOptions
    @Argument(parsing: .captureForPassthrough, help: .value("program", "-- PROGRAM [ARGS...]"))
    var command: [String] = []

    func validate() throws {
        if ["--help", "-h"].contains(command.first) { throw CleanExit.helpRequest(self) }  // not a program's name
        if let option = command.first, option.hasPrefix("-"), option != "--" {
            throw ValidationError(
                "unknown option '\(option)' of profile (before the program's --); its options: "
                    + Self.optionNames.joined(separator: ", "))
        }
        if words.isEmpty {
            throw ValidationError(
                "give the program to run after --, e.g. \(CommandContext.programName) profile -- ./prog")
        }
        try ValidationError.check(
            OptionRanges.problem(repetitions, in: OptionRanges.repetitions).map { "--repeat " + $0 })
        try ValidationError.check(OptionRanges.problem(timeout: timeout.duration))
    }

    /// The long options `profile` knows, in the order its help lists them (from the help itself, so the list
    /// cannot fall behind the options).
    static var optionNames: [String] {
        helpMessage(columns: 400).split(separator: "\n").compactMap { line in
            let word = line.drop(while: { $0 == " " }).prefix(while: { $0 != " " && $0 != "," })
            return word.hasPrefix("--") ? String(word) : nil
        }.uniqued()
    }

    /// The command line without the `--` that separates it.
    var words: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

    func run() throws {
        let executable = try Terminal.orFail { () throws(ProgramProblem) in try ProgramCheck.resolve(words[0]) }
        // The program's output is its own: it passes through as the program runs, and memharness's lines go to stderr.
        let invocation = ProgramInvocation(
            executable: executable, arguments: Array(words.dropFirst()), passesOutputThrough: true)
        var options = RunOptions(
            interval: measuring.interval?.duration, peakMode: measuring.peak, attribution: measuring.attribution)
        options.heapGraph = measuring.heapGraphRequest
        options.allocator = measuring.allocator
        options.suppressions = try measuring.loadSuppressions()
        let request = RunRequest.profiling(
            invocation, name: name, repetitions: repetitions, timeout: timeout.duration, options: options)
        let outcome = try Publishing.run(
            request, output: RunOutput(directory: out), display: display, progressInPlace: false)
        Terminal.note(Publication.profileSummary(outcome.record.report, folder: out, quiet: display.quiet))
        try Publishing.finish(outcome, folder: out, showTime: false)
    }
}
