import ArgumentParser
import Foundation
import HarnessModel
import Reports
import Runner

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Render a report folder's files again from its run.json.",
        discussion: "run.json is the record of the run: summary.csv, samples.csv, report.md and the charts are "
            + "renderings of it and come back byte for byte."
    )

    @Argument(help: ArgumentHelp("A report folder written by `memharness run`.", valueName: "dir"))
    var directory: String

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Render the charts with this value scale instead of the run's: auto, linear or log.", valueName: "scale"))
    var chartScale: ChartScaleArgument?

    func run() throws {
        var record = try ReportFolderCommands.read(directory)
        if let chartScale { record.rendering.chartScale = chartScale.scale }
        try ReportFolderCommands.write(record, to: directory)
        Terminal.result("Report: \(directory)/report.md")
    }
}

struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Check a report folder against a baseline (and its scenarios' thresholds) without running anything.",
        discussion: "Fails (exit 2) only on regressions outside the noise and beyond --floor: the new median's 95% "
            + "interval (with 6 or more repetitions; else the median) must lie wholly above the baseline's band, the "
            + "baseline value ± its tolerance (derived from its noise by `baseline save`, or --tolerance). "
            + "Improvements are reported and fail only with --fail-on-improvement."
    )

    @Argument(help: ArgumentHelp("The report folder to check.", valueName: "dir"))
    var directory = "Reports/latest"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "An earlier report folder: list the allocation sites that grew since it (both runs with --attribute).",
            valueName: "dir"))
    var against: String?

    @OptionGroup(title: "Gating")
    var gate: GateOptions

    func validate() throws {
        if gate.baseline == nil && against == nil {
            throw ValidationError("compare needs --baseline FILE or --against DIR")
        }
    }

    func run() throws {
        try gate.checkOutputFiles()
        let baseline = try gate.loadBaseline()
        let report = try ReportFolderCommands.read(directory).report
        if let baseline, let problem = RunPreflight.baselineProblem(baseline, scenarios: report.scenarios.map(\.name)) {
            throw Terminal.fail(problem, status: .usage)
        }
        if let against {
            let earlier = try ReportFolderCommands.read(against).report
            Terminal.result(SiteGrowthListing.render(report, since: earlier, earlierFolder: against))
            guard baseline != nil else { return }
        }
        let checks = Gate.checks(for: report, baseline: baseline, policy: gate.policy())
        try Publishing.publish(RunRecord(report: report, checks: checks), folder: directory, gate: gate)
        let status = Gate.status(of: report, checks: checks, policy: gate.policy())
        if status != .ok { throw ExitCode(status.code) }
    }
}

struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the report folders of shards (`run --shard I/N`) into one report, and check it."
    )

    @Argument(help: ArgumentHelp("Report folders of the shards.", valueName: "dir"))
    var directories: [String]

    @Option(name: .long, help: ArgumentHelp("Folder the combined report is written to.", valueName: "dir"))
    var out = "Reports/merged"

    @OptionGroup(title: "Gating")
    var gate: GateOptions

    func validate() throws {
        if directories.isEmpty { throw ValidationError("merge needs at least one report folder") }
    }

    func run() throws {
        try gate.checkOutputFiles()
        if let problem = RunPreflight.reportFolderProblem(out) { throw Terminal.fail(problem, status: .usage) }
        let baseline = try gate.loadBaseline()
        let records = try directories.map(ReportFolderCommands.read)
        guard let report = RunReport.merged(records.map(\.report)) else { throw ExitCode(ExitStatus.usage.code) }
        let checks = Gate.checks(for: report, baseline: baseline, policy: gate.policy())
        let record = RunRecord(report: report, checks: checks, rendering: records[0].rendering)
        try ReportFolderCommands.write(record, to: out)
        Terminal.result("Merged \(directories.count) folders, \(report.scenarios.flatMap(\.cases).count) cases.")
        try Publishing.publish(record, folder: out, gate: gate)
        let status = Gate.status(of: report, checks: checks, policy: gate.policy())
        if status != .ok { throw ExitCode(status.code) }
    }
}

struct BaselineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "baseline",
        abstract: "Manage baseline files (medians of a run, meant to be committed).",
        subcommands: [BaselineSaveCommand.self]
    )
}

struct BaselineSaveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Store the medians of a report folder as a baseline file.",
        discussion: "The file holds bytes per figure per scenario/strategy, sorted, with no times, hosts or paths, so "
            + "it diffs well and is the same on any machine of a kind. With each figure goes its noise, measured over "
            + "the run's repetitions (the reach of the median's 95% interval with 6 or more, else half their range), "
            + "and the tolerance derived from it: max(--noise-factor × noise, --min-tolerance). `compare` and "
            + "`run --baseline` hold each figure to its own tolerance unless --tolerance is given."
    )

    @Option(
        name: .long,
        help: ArgumentHelp("The baseline's name; the default file is Scenarios/baselines/NAME.json.", valueName: "name")
    )
    var name = "default"

    @Option(name: .long, help: ArgumentHelp("The report folder to take the medians from.", valueName: "dir"))
    var from = "Reports/latest"

    @Option(
        name: .long,
        help: ArgumentHelp("Where to write the baseline (default: Scenarios/baselines/NAME.json).", valueName: "file"))
    var output: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Each figure's tolerance is this many times its measured noise.", valueName: "k"))
    var noiseFactor: Double = ToleranceDerivation.defaultFactor

    @Option(
        name: .long, help: ArgumentHelp("The smallest tolerance derived, whatever the noise.", valueName: "percent"))
    var minTolerance = PercentArgument(ToleranceDerivation.defaultMinimum)

    @Flag(name: .long, help: "Keep the medians only: every comparison uses --tolerance (default 10%).")
    var noNoise = false

    func validate() throws {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw ValidationError("--name '\(name)': use letters, digits, '-' and '_'")
        }
        guard noiseFactor.isFinite, (0...100).contains(noiseFactor) else {
            throw ValidationError("--noise-factor \(noiseFactor) is out of range; allowed: 0...100")
        }
        guard minTolerance.fraction <= 1 else {
            throw ValidationError("--min-tolerance must be between 0% and 100%")
        }
    }

    func run() throws {
        let path = output ?? "Scenarios/baselines/\(name).json"
        if let problem = RunPreflight.outputFileProblem(path, option: "--output") {
            throw Terminal.fail(problem, status: .usage)
        }
        let report = try ReportFolderCommands.read(from).report
        let derivation = ToleranceDerivation(factor: noiseFactor, minimum: minTolerance.fraction)
        let baseline = Baseline(name: name, report: report, derivation: noNoise ? nil : derivation)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try ReportFolder.replaceFile(try encoder.encode(baseline) + Data("\n".utf8), at: path)
        } catch let error as ReportError {
            throw Terminal.fail(error.description, status: error.exitStatus)
        }
        let derived = baseline.noise?.values.reduce(0) { $0 + $1.count } ?? 0
        let tolerances =
            noNoise
            ? ""
            : "; \(derived) figure\(derived == 1 ? "" : "s") with a tolerance derived from \(derived == 1 ? "its" : "their") noise"
        Terminal.result(
            "Baseline '\(name)': \(baseline.cases.count) cases from \(from) written to \(path)\(tolerances)")
    }
}

/// Reading and writing report folders for the commands that work on existing ones.
enum ReportFolderCommands {
    static func read(_ directory: String) throws -> RunRecord {
        do {
            return try ReportFolder.read(directory)
        } catch {
            throw Terminal.fail(error.description, status: error.exitStatus)
        }
    }

    static func write(_ record: RunRecord, to directory: String) throws {
        do {
            let lock = try ReportFolderLock(directory)
            try ReportFolder.write(try ReportBundle.files(record), to: directory)
            withExtendedLifetime(lock) {}
        } catch {
            throw Terminal.fail(error.description, status: error.exitStatus)
        }
    }
}
