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

    @Flag(name: .long, help: "Smoke test: one repetition and every step duration divided by 4.")
    var quick = false

    @Option(name: .customLong("set"), help: ArgumentHelp("Override a parameter (name=value) or step argument (step.argument=value); repeatable.", valueName: "name=value"))
    var overrides: [String] = []

    @Option(name: .long, help: ArgumentHelp("Folder searched for scenario names and for the default set.", valueName: "dir"))
    var scenariosDir: String = "Scenarios"

    @Option(name: .long, help: ArgumentHelp("Rows per case in samples.csv (neighbours merged keeping maxima); 0 keeps all.", valueName: "n"))
    var samplesMaxRows: Int = 2000

    @Option(name: .long, help: ArgumentHelp("Time limit per case (overrides the scenario files), e.g. 30s.", valueName: "duration"))
    var timeout: DurationArgument?

    @Flag(name: .long, help: "No progress on stderr (it is also off when stderr is not a terminal).")
    var quiet = false

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
        do {
            specs = try ScenarioFiles.load(scenarios, directory: scenariosDir, catalog: catalog)
            specs = try applyOverrides(overrides, to: specs, catalog: catalog)
        } catch {
            for line in error.description.split(separator: "\n") { Terminal.error(String(line)) }
            throw ExitCode(error.isUsageError ? ExitCodes.usage : ExitCodes.harnessFailure)
        }
        if let timeout {
            for index in specs.indices { specs[index].timeout = timeout.duration }
        }
        var options = RunOptions(interval: interval.duration, repetitions: repetitions, quick: quick)
        options.sampleCapacity = 16_384
        let plan = planCases(specs, options: options)
        let progress = Progress(enabled: !quiet && Terminal.stderrIsTerminal)
        let launcher = CaseLauncher(executable: CaseLauncher.currentExecutable)
        let runs = runCases(plan, scenarios: specs, launcher: launcher) { event in progress.show(event) }
        let report = RunReport(
            generatedAt: Terminal.timestamp(),
            environment: MachineEnvironment.current(toolVersion: MemHarness.version, interval: interval.duration),
            scenarios: runs
        )
        do {
            try ReportFiles.write(report, to: out, samplesMaxRows: samplesMaxRows)
        } catch {
            Terminal.error("\(error)")
            throw ExitCode(ExitCodes.harnessFailure)
        }
        for scenario in runs {
            print("\(scenario.name): \(ScenarioSummary(scenario).reading.replacingOccurrences(of: "`", with: ""))")
        }
        print("Report: \(out)/report.md")
        let notOK = runs.flatMap(\.cases).filter { $0.status != .ok }
        if !notOK.isEmpty {
            for result in notOK {
                Terminal.error("\(result.scenario) / \(result.strategy) #\(result.repetition): \(result.status.rawValue): \(result.failure ?? "")")
            }
            throw ExitCode(ExitCodes.harnessFailure)
        }
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
