import ArgumentParser
import FileIO
import HarnessModel
import Reports
import Runner
import Verdicts

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Render a report folder's files again from its run.json.",
        discussion: "run.json is the record of the run: summary.csv, samples.csv, report.md, report.html and the "
            + "charts are renderings of it and come back byte for byte."
    )

    @Argument(help: .value("dir", "A report folder written by `memharness run`.")) var directory: String
    @Option(help: .value("scale", "Render the charts with this value scale instead of the run's: auto, linear, log."))
    var chartScale: ChartScaleChoice?

    func run() throws {
        var record = try ReportFolder.readOrFail(directory)
        if let chartScale { record.rendering.chartScale = chartScale.scale }
        try ReportFolder.renderOrFail(record, to: directory)
        Terminal.result("Report: \(directory)/report.md")
    }
}

struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Check a report folder against a baseline (and its scenarios' thresholds) without running anything.",
        discussion: BaselinePolicy.explanation
    )

    @Argument(help: .value("dir", "The report folder to check.")) var directory = "Reports/latest"
    @Option(
        help: .value(
            "dir",
            "An earlier report folder: list the allocation sites that grew since (both with --attribute) and the "
                + "leak signatures that are new and gone (both with a heap graph)."))
    var against: String?
    @Option(
        help: .value(
            "file",
            "With --against: write a page to explore the two runs (report.html of DIR with the earlier run's "
                + "strategies in each difference view)."))
    var html: String?
    @OptionGroup(title: "Gating") var gate: GateOptions

    func validate() throws {
        if html != nil && against == nil {
            throw ValidationError("--html needs --against DIR: the page sets an earlier run beside this one")
        }
        if gate.baseline == nil && against == nil {
            throw ValidationError("compare needs --baseline FILE or --against DIR")
        }
    }

    func run() throws {
        if let html {
            try Terminal.check(RunPreflight.outputFileProblem(html, option: "--html"))
            try Terminal.check(
                [directory, against ?? directory].lazy.compactMap {
                    RunPreflight.fileInsideFolderProblem(html, option: "--html", folder: $0)
                }.first)
        }
        let baseline = try gate.prepare()
        let record = try ReportFolder.readOrFail(directory)
        let report = record.report
        try Terminal.check(
            baseline.flatMap { RunPreflight.baselineProblem($0, scenarios: report.scenarios.map(\.name)) })
        if let against {
            let earlier = try ReportFolder.readOrFail(against).report
            Terminal.result(SiteGrowthListing.render(report, since: earlier, earlierFolder: against))
            if let html {
                let page = ReportBundle.comparisonPage(record, since: .init(report: earlier, folder: against))
                try Terminal.orFail { () throws(ReportError) in try ReportFolder.replaceFile(page, at: html) }
                Terminal.result("Comparison page: \(html)")
            }
            guard baseline != nil else { return }
        }
        let verdict = ReportBundle.verdict(
            for: report, baseline: baseline, policy: gate.policy(), rendering: record.rendering)
        try Publishing.publish(verdict, folder: directory, gate: gate)
    }
}

struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the report folders of shards (`run --shard I/N`) into one report, and check it."
    )

    @Argument(help: .value("dir", "Report folders of the shards.")) var directories: [String]
    @Option(help: .value("dir", "Folder the combined report is written to.")) var out = "Reports/merged"
    @OptionGroup(title: "Gating") var gate: GateOptions

    func validate() throws {
        if directories.isEmpty { throw ValidationError("merge needs at least one report folder") }
    }

    func run() throws {
        try Terminal.check(RunPreflight.reportFolderProblem(out))
        let baseline = try gate.prepare()
        let records = try directories.map(ReportFolder.readOrFail)
        guard let report = RunReport.merged(records.map(\.report)) else { throw ExitCode(ExitStatus.usage.code) }
        let verdict = ReportBundle.verdict(
            for: report, baseline: baseline, policy: gate.policy(), rendering: records[0].rendering)
        try ReportFolder.renderOrFail(verdict.record, to: out)
        let cases = RunReport.casesCount(
            report.scenarios.flatMap(\.cases).count, instrumented: report.scenarios.flatMap(\.instrumentedCases).count)
        Terminal.result("Merged \(directories.count) folders, \(cases).")
        try Publishing.publish(verdict, folder: out, gate: gate)
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
        discussion: ToleranceDerivation.explanation
    )

    @Option(help: .value("name", "The baseline's name; the default file is Scenarios/baselines/NAME.json."))
    var name = "default"
    @Option(help: .value("dir", "The report folder to take the medians from.")) var from = "Reports/latest"
    @Option(help: .value("file", "Where to write the baseline (default: Scenarios/baselines/NAME.json)."))
    var output: String?
    @Option(help: .value("k", "Each figure's tolerance is this many times its measured noise."))
    var noiseFactor: Double = ToleranceDerivation.defaultFactor
    @Option(help: .value("percent", "The smallest tolerance derived, whatever the noise."))
    var minTolerance = PercentArgument(ToleranceDerivation.defaultMinimum)
    @Flag(help: "Keep the medians only: every comparison uses --tolerance (default 10%).") var noNoise = false

    func validate() throws {
        try ValidationError.check(
            BaselineFile.settingsProblem(name: name, noiseFactor: noiseFactor, minimumTolerance: minTolerance.fraction))
    }

    func run() throws {
        let path = output ?? BaselineFile.defaultPath(name: name)
        try Terminal.check(RunPreflight.outputFileProblem(path, option: "--output"))
        let report = try ReportFolder.readOrFail(from).report
        let derivation = ToleranceDerivation(factor: noiseFactor, minimum: minTolerance.fraction)
        let baseline = Baseline(name: name, report: report, derivation: noNoise ? nil : derivation)
        try Terminal.orFail { () throws(ReportError) in try BaselineFile.write(baseline, to: path) }
        Terminal.result(BaselineFile.savedMessage(baseline, report: report, from: from, to: path))
    }
}

extension ReportFolder {
    /// `read`; an error is shown and ends the command with its status.
    static func readOrFail(_ directory: String) throws -> RunRecord {
        try Terminal.orFail { () throws(ReportError) in try read(directory) }
    }

    /// `render`; an error is shown and ends the command with its status.
    static func renderOrFail(_ record: RunRecord, to directory: String) throws {
        try Terminal.orFail { () throws(ReportError) in try render(record, to: directory) }
    }
}
