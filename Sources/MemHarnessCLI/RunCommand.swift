import ArgumentParser
import Foundation
import HarnessCore
import HarnessModel
import Reports
import Synchronization
import Workloads

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run scenarios and write summary.csv, samples.csv and report.md.",
        discussion: """
        Each case (scenario x strategy x repetition) runs in its own child process. Scenario files are \
        validated before any case runs. With no SCENARIO, every Scenarios/*.yaml is run.
        """
    )

    @Argument(help: ArgumentHelp("Scenario files (.yaml) or scenario names; default: every file in --scenarios-dir.", valueName: "scenario"))
    var scenarios: [String] = []

    @Option(name: .long, help: ArgumentHelp("Folder the report is written to.", valueName: "dir"))
    var out: String = "Reports/latest"

    @Option(name: .long, help: ArgumentHelp("Sampling interval, e.g. 1ms, 500us; 0ms turns sampling off.", valueName: "duration"))
    var interval: DurationArgument = DurationArgument(.milliseconds(1))

    @Option(name: .customLong("repeat"), help: ArgumentHelp("Repetitions per strategy (overrides the scenario files).", valueName: "n"))
    var repetitions: Int?

    @Flag(name: .long, help: "Smoke test: one repetition and every step duration divided by 4; thresholds are not checked.")
    var quick = false

    @Option(name: .customLong("set"), help: ArgumentHelp("Override a parameter (name=value) or step argument (step.argument=value); repeatable. One --set may list several values (burst.duration=1s,2s,4s): a sweep, reported as peak per value with the growth slope.", valueName: "name=value"))
    var overrides: [String] = []

    @Option(name: .long, help: ArgumentHelp("Folder searched for scenario names and for the default set.", valueName: "dir"))
    var scenariosDir: String = "Scenarios"

    @Option(name: .long, help: ArgumentHelp("Rows per case in samples.csv (neighbours merged keeping maxima); 0 keeps all.", valueName: "n"))
    var samplesMaxRows: Int = 2000

    @Option(name: .long, help: ArgumentHelp("Value scale of the charts: auto (log when peaks differ by more than 30x), linear or log.", valueName: "scale"))
    var chartScale: ChartScaleArgument = .auto

    @Option(name: .long, help: ArgumentHelp("Time limit per case (overrides the scenario files), e.g. 30s.", valueName: "duration"))
    var timeout: DurationArgument?

    @Option(name: .long, help: ArgumentHelp("sampled (default), or exact: also count every allocation (cases run in memharness-exact) for exact peaks per phase and overall, beside the sampled ones; overrides the files' `peak:`.", valueName: "mode"))
    var peak: PeakArgument?

    @Flag(name: .long, help: "No progress on stderr (it is also off when stderr is not a terminal).")
    var quiet = false

    @Option(name: .long, help: ArgumentHelp("Run only shard I of N (a deterministic, round-robin subset of the cases), e.g. 2/4; combine shards with `merge`.", valueName: "i/n"))
    var shard: ShardArgument?

    @OptionGroup(title: "Gating")
    var gate: GateOptions

    @OptionGroup(title: "Memory budget")
    var memory: MemoryBudgetArguments

    func validate() throws {
        if let repetitions, !(1...100).contains(repetitions) {
            throw ValidationError("--repeat \(repetitions) is out of range; allowed: 1...100")
        }
        if interval.duration != .zero && interval.duration < .microseconds(50) {
            throw ValidationError("--interval \(Units.formatDuration(nanoseconds: interval.duration.nanoseconds)) is too short; allowed: 0ms (off) or 50us...10s")
        }
        if interval.duration > .seconds(10) {
            throw ValidationError("--interval is too long; allowed: 0ms (off) or 50us...10s")
        }
        if samplesMaxRows < 0 {
            throw ValidationError("--samples-max-rows must be 0 (keep all) or more, got \(samplesMaxRows)")
        }
    }

    func run() throws {
        let catalog = WorkloadCatalog.builtIn
        var specs: [ScenarioSpec]
        // Every sweep point is validated before the first case runs.
        var points: [(label: String, specs: [ScenarioSpec])] = []
        var sweep: SweepSpec?
        do {
            specs = try ScenarioFiles.load(scenarios, directory: scenariosDir, catalog: catalog)
            let sweeps = overrides.filter(SweepSpec.isSweep)
            let fixed = overrides.filter { !SweepSpec.isSweep($0) }
            if sweeps.count > 1 {
                throw HarnessError.invalidOverride(sweeps[1], reason: "only one --set may list several values; this run already sweeps \(sweeps[0])")
            }
            specs = try applyOverrides(fixed, to: specs, catalog: catalog)
            if let text = sweeps.first {
                let parsed = try SweepSpec(parsing: text)
                sweep = parsed
                for (value, override) in zip(parsed.values, parsed.overrides) {
                    points.append(("\(parsed.key)=\(value)", try applyOverrides([override], to: specs, catalog: catalog)))
                }
            } else {
                points = [("", specs)]
            }
        } catch let error as HarnessError {
            for line in error.description.split(separator: "\n") { Terminal.error(String(line)) }
            throw ExitCode(error.isUsageError ? ExitCodes.usage : ExitCodes.harnessFailure)
        }
        if let timeout {
            for point in points.indices {
                for index in points[point].specs.indices { points[point].specs[index].timeout = timeout.duration }
            }
        }
        var options = RunOptions(interval: interval.duration, repetitions: repetitions, quick: quick)
        options.sampleCapacity = 16_384
        options.memory = try memory.options()
        options.peakMode = peak?.mode
        var budgetProblems = options.memory.problems(for: specs)
        for spec in specs where (spec.interval ?? interval.duration) == .zero && options.memory.budget(for: spec) != nil {
            budgetProblems.append("\(spec.file): a memory limit or warning needs the sampler; use an --interval above 0")
        }
        guard budgetProblems.isEmpty else {
            for problem in budgetProblems { Terminal.error(problem) }
            throw ExitCode(ExitCodes.usage)
        }
        let launcher = CaseLauncher.forCurrentBinary()
        if launcher.exactExecutable == nil,
           let spec = specs.first(where: { (options.peakMode ?? $0.peakMode) == .exact }) {
            // Before any case runs: every exact case would fail the same way.
            let detail = CaseLauncher.missingExactDetail(beside: launcher.executable)
            Terminal.error("\(spec.file): " + HarnessError.exactPeakUnavailable(detail: detail).description)
            throw ExitCode(ExitCodes.harnessFailure)
        }
        let progress = Progress(enabled: !quiet && Terminal.stderrIsTerminal)
        var runs: [ScenarioRun] = []
        var sweepPoints: [String: [(label: String, value: ParameterValue, run: ScenarioRun)]] = [:]
        for point in points {
            var plan = planCases(point.specs, options: options)
            if let shard {
                plan = plan.enumerated().filter { $0.offset % shard.count == shard.index - 1 }.map(\.element)
            }
            let pointRuns = runCases(plan, scenarios: point.specs, launcher: launcher) { event in progress.show(event) }
            guard let sweep else {
                runs += pointRuns
                continue
            }
            for (spec, run) in zip(point.specs, pointRuns) {
                var named = run
                named.name = "\(run.name) @ \(point.label)"
                for index in named.cases.indices { named.cases[index].scenario = named.name }
                runs.append(named)
                if let value = sweptValue(sweep.key, in: spec) {
                    sweepPoints[run.name, default: []].append((point.label, value, run))
                }
            }
        }
        let sweeps = sweep.map { sweep in
            specs.compactMap { spec in
                sweepPoints[spec.name].map { SweepSummary(scenario: spec.name, key: sweep.key, points: $0) }
            }
        }
        let report = RunReport(
            generatedAt: Terminal.timestamp(),
            environment: MachineEnvironment.current(toolVersion: MemHarness.version, interval: interval.duration),
            scenarios: runs, sweeps: sweeps
        )
        let checks = try Gate.evaluate(report, options: gate, thresholds: !quick)
        do {
            try ReportFiles.write(report, to: out, options: ReportBundle.Options(samplesMaxRows: samplesMaxRows, chartScale: chartScale.scale), checks: checks)
        } catch {
            Terminal.error("\(error)")
            throw ExitCode(ExitCodes.harnessFailure)
        }
        for scenario in runs {
            print("\(scenario.name): \(ScenarioSummary(scenario).reading.replacingOccurrences(of: "`", with: ""))")
        }
        print("Report: \(out)/report.md")
        try Gate.publish(checks, report: report, options: gate)
        if quick && runs.contains(where: { !$0.thresholds.isEmpty }) {
            Terminal.write("note: --quick shortens the steps the thresholds were written for, so they were not checked\n")
        }
        for result in runs.flatMap(\.cases) where result.status != .ok {
            if result.status == .killedByMemoryLimit {
                Terminal.write("memory limit: \(result.scenario) / \(result.strategy) #\(result.repetition): \(result.failure ?? "")\n")
            } else {
                Terminal.error("\(result.scenario) / \(result.strategy) #\(result.repetition): \(result.status.rawValue): \(result.failure ?? "")")
            }
        }
        try Gate.finish(report, checks: checks, failOnMemoryLimit: memory.failOnMemoryLimit)
    }
}

/// `--shard I/N`: the I-th of N shards, from 1.
struct ShardArgument: ExpressibleByArgument, Sendable {
    var index: Int
    var count: Int

    init?(argument: String) {
        let parts = argument.split(separator: "/").map { Int($0) }
        guard parts.count == 2, let index = parts[0], let count = parts[1], count >= 1, (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }
}

/// Progress on stderr: the running case with its elapsed time (ticking), then one line per finished case.
final class Progress: Sendable {
    let enabled: Bool
    /// The running case's label and start, read by the ticker thread.
    private let running = Mutex<(label: String, start: ContinuousClock.Instant)?>(nil)

    init(enabled: Bool) {
        self.enabled = enabled
        guard enabled else { return }
        Thread.detachNewThread { [self] in
            while true {
                Thread.sleep(forTimeInterval: 0.5)
                running.withLock { current in
                    guard let current else { return }
                    let seconds = Units.fixed(Double((ContinuousClock.now - current.start).nanoseconds) / 1e9, decimals: 1)
                    Terminal.write("\r\u{1B}[2K\(current.label) … \(seconds) s")
                }
            }
        }
    }

    func show(_ event: RunProgress) {
        guard enabled else { return }
        switch event {
        case let .started(index, total, spec):
            let label = "[\(index)/\(total)] \(spec.label)"
            running.withLock { current in
                current = (label, .now)
                Terminal.write("\(label) …")
            }
        case let .finished(index, total, result, elapsed):
            let seconds = Units.fixed(Double(elapsed.nanoseconds) / 1e9, decimals: 1)
            let outcome = result.status == .ok
                ? "peak \(Units.formatBytes(result.peakAllocatedNetBytes))"
                : "\(result.status.rawValue): \(result.failure ?? "")"
            running.withLock { current in
                current = nil
                Terminal.write("\r\u{1B}[2K[\(index)/\(total)] \(result.scenario) / \(result.strategy) #\(result.repetition) \(seconds) s, \(outcome)\n")
            }
        }
    }
}

/// `--peak sampled|exact`.
enum PeakArgument: String, ExpressibleByArgument, CaseIterable {
    case sampled, exact

    var mode: PeakMode {
        switch self {
        case .sampled: return .sampled
        case .exact: return .exact
        }
    }
}

/// `--chart-scale auto|linear|log`.
enum ChartScaleArgument: String, ExpressibleByArgument, CaseIterable {
    case auto, linear, log

    var scale: ValueScale? {
        switch self {
        case .auto: return nil
        case .linear: return .linear
        case .log: return .log
        }
    }
}
