import ArgumentParser
import Foundation
import HarnessModel
import Reports

/// Options shared by `run`, `compare` and `merge`: what to check and where to publish the checks.
struct GateOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Compare the medians with this baseline file (see `baseline save`).", valueName: "file"))
    var baseline: String?

    @Option(name: .long, help: ArgumentHelp("Relative change tolerated against the baseline.", valueName: "percent"))
    var tolerance: PercentArgument = PercentArgument(0.10)

    @Option(name: .long, help: ArgumentHelp("Absolute change tolerated against the baseline whatever the ratio.", valueName: "size"))
    var floor: SizeArgument = SizeArgument(256 * 1024)

    @Flag(name: .long, help: "Also fail when a figure improved beyond the tolerance and floor.")
    var failOnImprovement = false

    @Option(name: .long, help: ArgumentHelp("Write the checks as JUnit XML to this file.", valueName: "file"))
    var junit: String?

    @Option(name: .long, help: ArgumentHelp("Write median peaks in github-action-benchmark's customSmallerIsBetter JSON to this file.", valueName: "file"))
    var json: String?

    func validate() throws {
        if let baseline, !FileManager.default.fileExists(atPath: baseline) {
            throw ValidationError("--baseline \(baseline): no such file; create one with `memharness baseline save`")
        }
    }

    /// Reads the baseline file; a malformed one is a usage error.
    func loadBaseline() throws -> Baseline? {
        guard let baseline else { return nil }
        guard let data = FileManager.default.contents(atPath: baseline) else {
            throw GateError("--baseline \(baseline): cannot read the file")
        }
        do {
            let decoded = try JSONDecoder().decode(Baseline.self, from: data)
            guard decoded.format == Baseline.formatName else {
                throw GateError("--baseline \(baseline): format '\(decoded.format)' is not \(Baseline.formatName)")
            }
            return decoded
        } catch let error as GateError {
            throw error
        } catch {
            throw GateError("--baseline \(baseline): not a memharness baseline (\(error))")
        }
    }
}

struct GateError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Evaluates and publishes the checks of a run, and maps everything to the exit code.
enum Gate {
    /// Thresholds of every scenario, then the baseline comparison.
    /// - Parameter thresholds: false for `--quick` runs, whose shortened steps the limits were not written for.
    static func checks(for report: RunReport, options: GateOptions, thresholds: Bool = true) throws -> [CheckResult] {
        var checks = thresholds ? report.scenarios.flatMap { ThresholdEvaluator.evaluate($0.thresholds, in: $0) } : []
        checks += report.scenarios.flatMap(LeakChecks.checks)
        if let baseline = try options.loadBaseline(), let file = options.baseline {
            checks += BaselinePolicy(tolerance: options.tolerance.fraction, floorBytes: Double(options.floor.bytes),
                                     failOnImprovement: options.failOnImprovement).compare(report, with: baseline, baselineFile: file)
        }
        return checks
    }

    /// `checks(for:options:thresholds:)` for a command: a bad baseline file is reported and ends the
    /// command with the usage exit code.
    static func evaluate(_ report: RunReport, options: GateOptions, thresholds: Bool = true) throws -> [CheckResult] {
        do {
            return try checks(for: report, options: options, thresholds: thresholds)
        } catch {
            Terminal.error("\(error)")
            throw ExitCode(ExitCodes.usage)
        }
    }

    /// Ends the command with `exitCode(_:checks:failOnMemoryLimit:)` when it is not 0.
    static func finish(_ report: RunReport, checks: [CheckResult], failOnMemoryLimit: Bool = false) throws {
        let code = exitCode(report, checks: checks, failOnMemoryLimit: failOnMemoryLimit)
        if code != ExitCodes.ok { throw ExitCode(code) }
    }

    /// Prints the check table, writes JUnit/JSON files and GitHub outputs when asked or detected.
    static func publish(_ checks: [CheckResult], report: RunReport, options: GateOptions) throws {
        if !checks.isEmpty { print(CheckOutputs.terminalTable(checks), terminator: "") }
        if let junit = options.junit {
            try ReportFiles.atomicWrite(Data(CheckOutputs.junit(checks).utf8), to: junit)
        }
        if let json = options.json {
            try ReportFiles.atomicWrite(Data(CheckOutputs.benchmarkJSON(report).utf8), to: json)
        }
        let environment = ProcessInfo.processInfo.environment
        if environment["GITHUB_ACTIONS"] == "true" {
            print(CheckOutputs.githubAnnotations(checks), terminator: "")
        }
        if let summaryPath = environment["GITHUB_STEP_SUMMARY"], !summaryPath.isEmpty {
            let text = CheckOutputs.markdown(checks) + "\n" + report.scenarios.map { "- **\($0.name)**: \(ScenarioSummary($0).reading)" }.joined(separator: "\n") + "\n"
            if let handle = FileHandle(forWritingAtPath: summaryPath) {
                handle.seekToEndOfFile()
                handle.write(Data(text.utf8))
                handle.closeFile()
            } else {
                try Data(text.utf8).write(to: URL(fileURLWithPath: summaryPath))
            }
        }
    }

    /// 1 when a case did not complete (harness failure), else 2 when a check failed (or, with
    /// `failOnMemoryLimit`, a case was killed by its memory limit), else 0. A kill is otherwise a
    /// result shown in the report, like a peak: shipped scenarios kill strategies on purpose.
    static func exitCode(_ report: RunReport, checks: [CheckResult], failOnMemoryLimit: Bool = false) -> Int32 {
        let cases = report.scenarios.flatMap(\.cases)
        if cases.contains(where: { $0.status != .ok && $0.status != .killedByMemoryLimit }) { return ExitCodes.harnessFailure }
        if checks.contains(where: { !$0.passed }) { return ExitCodes.finding }
        if failOnMemoryLimit && cases.contains(where: { $0.status == .killedByMemoryLimit }) { return ExitCodes.finding }
        return ExitCodes.ok
    }
}

/// A percentage option such as `10%` (or a fraction such as `0.1`).
struct PercentArgument: ExpressibleByArgument, Sendable {
    var fraction: Double
    init(_ fraction: Double) { self.fraction = fraction }
    init?(argument: String) {
        guard let value = Units.parseFraction(argument), value >= 0 else { return nil }
        fraction = value
    }
    var defaultValueDescription: String { Units.fixed(fraction * 100, decimals: 0) + "%" }
}

/// A size option such as `256KiB`.
struct SizeArgument: ExpressibleByArgument, Sendable {
    var bytes: Int
    init(_ bytes: Int) { self.bytes = bytes }
    init?(argument: String) {
        guard let value = Units.parseBytes(argument) else { return nil }
        bytes = value
    }
    var defaultValueDescription: String { Units.formatBytes(bytes).replacingOccurrences(of: ".00 ", with: "").replacingOccurrences(of: " ", with: "") }
}
