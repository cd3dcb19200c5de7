import ArgumentParser
import Foundation
import HarnessModel
import Reports

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
        discussion: "The file holds bytes per figure per scenario/strategy, sorted, with no times, hosts or paths, so it diffs well and is the same on any machine of a kind."
    )

    @Option(name: .long, help: ArgumentHelp("The baseline's name; the default file is Scenarios/baselines/NAME.json.", valueName: "name"))
    var name: String = "default"

    @Option(name: .long, help: ArgumentHelp("The report folder to take the medians from.", valueName: "dir"))
    var from: String = "Reports/latest"

    @Option(name: .long, help: ArgumentHelp("Where to write the baseline (default: Scenarios/baselines/NAME.json).", valueName: "file"))
    var output: String?

    func validate() throws {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw ValidationError("--name '\(name)': use letters, digits, '-' and '_'")
        }
    }

    func run() throws {
        let report = try ReportFolder.load(from)
        let baseline = Baseline(name: name, report: report)
        let path = output ?? "Scenarios/baselines/\(name).json"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try ReportFiles.atomicWrite(try encoder.encode(baseline) + Data("\n".utf8), to: path)
        print("Baseline '\(name)': \(baseline.cases.count) cases from \(from) written to \(path)")
    }
}

struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Check a report folder against a baseline (and its scenarios' thresholds) without running anything.",
        discussion: "Fails (exit 2) only on regressions beyond both --tolerance and --floor; improvements are reported and fail only with --fail-on-improvement."
    )

    @Argument(help: ArgumentHelp("The report folder to check.", valueName: "dir"))
    var directory: String = "Reports/latest"

    @OptionGroup(title: "Gating")
    var gate: GateOptions

    func validate() throws {
        if gate.baseline == nil { throw ValidationError("compare needs --baseline FILE") }
    }

    func run() throws {
        let report = try ReportFolder.load(directory)
        let checks = try Gate.evaluate(report, options: gate)
        try Gate.publish(checks, report: report, options: gate)
        try Gate.finish(report, checks: checks)
    }
}

struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the report folders of shards (`run --shard I/N`) into one report, and check it.",
        discussion: "Each folder's summary.csv and samples.csv are the source of truth; its run.json supplies descriptions, thresholds and the environment."
    )

    @Argument(help: ArgumentHelp("Report folders of the shards.", valueName: "dir"))
    var directories: [String]

    @Option(name: .long, help: ArgumentHelp("Folder the combined report is written to.", valueName: "dir"))
    var out: String = "Reports/merged"

    @OptionGroup(title: "Gating")
    var gate: GateOptions

    func validate() throws {
        if directories.isEmpty { throw ValidationError("merge needs at least one report folder") }
    }

    func run() throws {
        let reports = try directories.map(ReportFolder.load)
        guard let report = RunReport.merged(reports) else { throw ExitCode(ExitCodes.usage) }
        let checks = try Gate.evaluate(report, options: gate)
        do {
            try ReportFiles.write(report, to: out, options: ReportBundle.Options(samplesMaxRows: 0), checks: checks)
        } catch {
            Terminal.error("\(error)")
            throw ExitCode(ExitCodes.harnessFailure)
        }
        print("Merged \(directories.count) folders, \(report.scenarios.flatMap(\.cases).count) cases: \(out)/report.md")
        try Gate.publish(checks, report: report, options: gate)
        try Gate.finish(report, checks: checks)
    }
}

/// Reads a report folder back: CSV files for the figures, run.json for what CSV does not hold.
enum ReportFolder {
    static func load(_ directory: String) throws -> RunReport {
        let fileManager = FileManager.default
        guard let summary = fileManager.contents(atPath: "\(directory)/summary.csv") else {
            Terminal.error("\(directory)/summary.csv: cannot read it; expected a folder written by `memharness run`")
            throw ExitCode(ExitCodes.usage)
        }
        let samples = fileManager.contents(atPath: "\(directory)/samples.csv")
        let metadata = fileManager.contents(atPath: "\(directory)/run.json").flatMap { try? JSONDecoder().decode(RunReport.self, from: $0) }
        do {
            return try ReportReader.read(summary: String(decoding: summary, as: UTF8.self),
                                         samples: samples.map { String(decoding: $0, as: UTF8.self) }, metadata: metadata)
        } catch {
            Terminal.error("\(directory)/\(error.description)")
            throw ExitCode(ExitCodes.usage)
        }
    }
}
