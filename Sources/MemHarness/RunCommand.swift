import ArgumentParser
import HarnessModel
import Runner

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run scenarios and write the report folder (report.md, summary.csv, samples.csv, run.json, charts).",
        discussion: """
            Each case (scenario x strategy x repetition) runs in its own child process. Every input is \
            checked before any case runs. With no SCENARIO, every Scenarios/*.yaml is run.
            """
    )

    @Argument(
        help: ArgumentHelp(
            "Scenario files (.yaml) or scenario names; default: every file in --scenarios-dir.", valueName: "scenario"))
    var scenarios: [String] = []

    @Option(name: .long, help: ArgumentHelp("Folder the report is written to.", valueName: "dir"))
    var out: String = "Reports/latest"

    @OptionGroup(title: "Running")
    var running: RunningOptions

    @OptionGroup(title: "Gating")
    var gate: GateOptions

    @OptionGroup(title: "Memory budget")
    var memory: MemoryBudgetArguments

    func run() throws {
        try gate.checkOutputFiles()
        let request = try running.request(scenarios: scenarios, memory: memory.options())
        let output = RunOutput(
            directory: out, rendering: running.rendering,
            gate: gate.policy(checkThresholds: !running.quick, failOnMemoryLimit: memory.failOnMemoryLimit),
            baseline: try gate.loadBaseline())
        let progress = ProgressDisplay(quiet: running.quiet, verbose: running.verbose)
        let outcome: RunOutcome
        do {
            outcome = try RunSession.run(
                request, catalog: CommandContext.catalog, launcher: ProcessCaseLauncher.forCurrentBinary(),
                output: output, toolVersion: MemHarness.version, events: progress.show)
        } catch {
            progress.end()
            throw Terminal.fail(error.description, status: error.exitStatus)
        }
        progress.end()
        try Publishing.publish(outcome.record, folder: out, gate: gate)
        if running.quick && outcome.record.report.scenarios.contains(where: { !$0.thresholds.isEmpty }) {
            Terminal.note("note: --quick shortens the steps the thresholds were written for, so they were not checked")
        }
        Publishing.reportCasesThatDidNotComplete(outcome.record.report)
        if !running.quiet { Publishing.reportTime(outcome.record.report) }
        try Publishing.finish(outcome, folder: out)
    }
}

/// The options of `run` that shape the cases.
struct RunningOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Sampling interval, e.g. 1ms, 500us; 0ms turns sampling off.", valueName: "duration"))
    var interval = DurationArgument(.milliseconds(1))

    @Option(
        name: .customLong("repeat"),
        help: ArgumentHelp(
            "Repetitions per strategy (overrides the scenario files): a count, or auto: repeat each strategy until the "
                + "95% interval of its median is within ±2% (6 to 15 times; a file's own `repetitions: auto` settings stay).",
            valueName: "n|auto"))
    var repetitions: RepetitionArgument?

    @Flag(
        name: .long,
        help: "Smoke test: one repetition and every step duration divided by 4; thresholds are not checked.")
    var quick = false

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            "Override a parameter (name=value) or step argument (step.argument=value); repeatable. One --set may list "
                + "several values (burst.duration=1s,2s,4s): a sweep, reported as peak per value with the growth slope.",
            valueName: "name=value"))
    var overrides: [String] = []

    @Option(
        name: .long, help: ArgumentHelp("Folder searched for scenario names and for the default set.", valueName: "dir")
    )
    var scenariosDir = "Scenarios"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Rows per case kept in run.json and samples.csv (neighbours merged keeping maxima); 0 keeps all.",
            valueName: "n"))
    var samplesMaxRows = 2000

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Value scale of the charts: auto (log when peaks differ by more than 30x), linear or log.",
            valueName: "scale"))
    var chartScale: ChartScaleArgument = .auto

    @Option(
        name: .long,
        help: ArgumentHelp("Time limit per case (overrides the scenario files), e.g. 30s.", valueName: "duration"))
    var timeout: DurationArgument?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "sampled (default), or exact: also count every allocation for exact peaks per phase and overall, beside "
                + "the sampled ones; overrides the files' `peak:`.",
            valueName: "mode"))
    var peak: PeakMode?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run only shard I of N (a deterministic, round-robin subset of the cases), e.g. 2/4; combine shards with "
                + "`merge`.",
            valueName: "i/n"))
    var shard: Shard?

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Also record where the memory is: one more case per strategy samples allocation stacks (its figures "
                + "never gate) for the report's top sites, flame graphs, folded stacks and pprof profiles."))
    var attribute = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Mean bytes between sampled allocation stacks with --attribute (Poisson, by bytes).", valueName: "size"))
    var stackSample: SizeArgument = SizeArgument(AttributionRequest.defaultSampleMeanBytes)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Cases of scenarios that allow it (`parallel: true`) run this many at once; the others always run "
                + "alone. auto: the number of CPUs.",
            valueName: "n"))
    var jobs: JobsArgument = .auto

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Continue the interrupted run into the same --out: run only the cases it did not finish, then write the "
                + "report of them all. The scenarios, --set values and options must be the same."))
    var resume = false

    @Flag(name: .long, help: "No progress on stderr (it is also off when stderr is not a terminal).")
    var quiet = false

    @Flag(name: .long, help: "A line on stderr for every finished case, even when stderr is not a terminal.")
    var verbose = false

    func validate() throws {
        if case .fixed(let count)? = repetitions?.policy, !(1...100).contains(count) {
            throw ValidationError("--repeat \(count) is out of range; allowed: 1...100, or auto")
        }
        let nanoseconds = interval.duration.nanoseconds
        if nanoseconds != 0 && !(50_000...10_000_000_000).contains(nanoseconds) {
            throw ValidationError(
                "--interval \(Units.formatDuration(nanoseconds: nanoseconds)) is out of range; allowed: 0ms (off) or 50us...10s"
            )
        }
        if let timeout, !(100_000_000...3_600_000_000_000).contains(timeout.duration.nanoseconds) {
            throw ValidationError(
                "--timeout \(Units.formatDuration(nanoseconds: timeout.duration.nanoseconds)) is out of range; "
                    + "allowed: 100ms...3600s")
        }
        if samplesMaxRows < 0 {
            throw ValidationError("--samples-max-rows must be 0 (keep all) or more, got \(samplesMaxRows)")
        }
        if case .count(let count) = jobs, !(1...64).contains(count) {
            throw ValidationError("--jobs \(count) is out of range; allowed: 1...64 or auto")
        }
        if quiet && verbose { throw ValidationError("--quiet and --verbose contradict each other; give one") }
        if !((1 << 10)...(64 << 20)).contains(stackSample.bytes) {
            throw ValidationError("--stack-sample \(stackSample.bytes) bytes is out of range; allowed: 1KiB...64MiB")
        }
    }

    /// The run these options ask for.
    func request(scenarios: [String], memory: MemoryOptions) -> RunRequest {
        var request = RunRequest(scenarios: scenarios, scenariosDirectory: scenariosDir, overrides: overrides)
        request.options = RunOptions(interval: interval.duration, repetitions: repetitions?.policy, quick: quick)
        request.options.memory = memory
        request.options.peakMode = peak
        request.options.timeout = timeout?.duration
        request.options.attribution = attribute ? AttributionRequest(sampleMeanBytes: stackSample.bytes) : nil
        request.options.jobs = jobs.count
        request.options.resume = resume
        request.shard = shard
        return request
    }

    var rendering: RenderingOptions { RenderingOptions(samplesMaxRows: samplesMaxRows, chartScale: chartScale.scale) }
}
