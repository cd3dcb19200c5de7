import ArgumentParser
import ChildProcesses
import FileIO
import Foundation
import HarnessModel
import History
import Reports
import Runner
import Scenarios

extension HistoryError: StatusError {}

/// `memharness history`: every run recorded with its commit, change points found, gated, explained and bisected.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Record runs with their commit in a history store; find the commits where a figure stepped.",
        discussion: """
            A store is a folder of immutable run records, one file per run named by its content, so stores \
            merge by copying records/; its SQLite index is rebuilt from them when missing or stale. Change \
            points are found by PELT and kept when the step exceeds the series' own noise band (± 2.5σ, σ a \
            robust estimate never below the figure's quantum) with p < 0.01 and persists (an excursion that \
            returns is noise): no tolerance to set.
            """,
        subcommands: [
            HistoryRecordCommand.self, HistoryShowCommand.self, HistoryGateCommand.self, HistoryDiffCommand.self,
            HistoryBisectCommand.self,
        ]
    )
}

/// `--store`, and `--branch`/`--machine` to read part of it.
struct StoreOptions: ParsableArguments {
    @Option(help: .value("dir", "The history store.")) var store = ".memharness/history"

    /// The store, which must exist.
    func open() throws -> HistoryStore {
        try Terminal.orFail { () throws(HistoryError) in try HistoryStore(path: store, create: false) }
    }
}

struct RunFilterOptions: ParsableArguments {
    @Option(help: .value("name", "Only the runs of this branch.")) var branch: String?
    @Option(help: .value("name", "Only the runs of this machine.")) var machine: String?

    var filter: RunFilter { RunFilter(branch: branch, machine: machine) }
}

extension StoreOptions {
    /// The store's runs and series that `filter` keeps, analysed.
    func analysis(_ filter: RunFilter) throws -> (store: HistoryStore, table: HistoryTable, analysis: HistoryAnalysis) {
        let store = try open()
        let table = try Terminal.orFail { () throws(HistoryError) in try HistoryIndex.table(store, filter: filter) }
        return (store, table, HistoryAnalysis(table))
    }
}

struct HistoryRecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Add a finished report folder's run to the history store, with its commit, branch, time and machine.",
        discussion: """
            Each field is read from git (git -C DIR: the commit, its author time, the branch unless HEAD is \
            detached) and from the CI environment (GITHUB_SHA, GITHUB_HEAD_REF/GITHUB_REF_NAME, CI_COMMIT_SHA, \
            CI_COMMIT_REF_NAME, RUNNER_NAME...), unless an option gives it. Recording the same run twice changes \
            nothing. A folder that is not a run, a damaged record or a store of another version exits with 64 \
            and leaves the store as it was.
            """
    )

    @Argument(help: .value("dir", "A report folder written by `memharness run`.")) var directory: String
    @OptionGroup var store: StoreOptions
    @Option(help: .value("sha", "The commit (default: git rev-parse HEAD, else the CI's variable).")) var commit:
        String?
    @Option(help: .value("name", "The branch (default: the CI's variable, else git's branch).")) var branch: String?
    @Option(help: .value("time", "The commit's time, ISO 8601 (default: git log -1 --format=%aI, else the run's)."))
    var time: String?
    @Option(help: .value("name", "The machine (default: the CI runner's name, else the run's CPU model and count)."))
    var machine: String?

    func validate() throws {
        if let time, ProvenanceReader.utc(time) == nil {
            throw ValidationError("--time '\(time)': expected an ISO 8601 time such as 2026-11-27T01:30:00Z")
        }
    }

    func run() throws {
        let report = try ReportFolder.readOrFail(directory).report
        let overrides = ProvenanceReader.Overrides(commit: commit, branch: branch, time: time, machine: machine)
        let provenance = ProvenanceReader.read(
            directory: directory, report: report, overrides: overrides, environment: ProcessInfo.processInfo.environment
        )
        let record = HistoryRecord(report: report, provenance: provenance)
        let added = try Terminal.orFail { () throws(HistoryError) in
            let store = try HistoryStore(path: store.store, create: true)
            let added = try store.add(record)
            try HistoryIndex.sync(store)
            return added
        }
        let what =
            "\(record.figures.count) figures of commit \(provenance.shortCommit)"
            + (provenance.branch.isEmpty ? "" : " on \(provenance.branch)")
        Terminal.result(
            added.added
                ? "Recorded \(directory) as \(added.id) in \(store.store): \(what)."
                : "Already recorded as \(added.id) in \(store.store): nothing changed.")
    }
}

struct HistoryShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Write the history report: each figure over commits with its noise band and change points.",
        discussion: "history.md lists every change point (commit, medians before and after, step, p-value) and "
            + "links one SVG chart per scenario, strategy and figure (charts/). The folder is replaced in one step."
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var filter: RunFilterOptions
    @Option(help: .value("dir", "Folder the history report is written to.")) var out = "Reports/history"

    func run() throws {
        let analysis = try store.analysis(filter.filter).analysis
        try Terminal.orFail { () throws(ReportError) in
            try ReportFolder.write(HistoryReport.files(analysis), to: out, kind: HistoryReport.folderKind)
        }
        var lines = [
            "History: \(analysis.runs.count) runs, \(analysis.series.count) series, "
                + "\(analysis.series.map(\.analysis.changePoints.count).reduce(0, +)) change points."
        ]
        for entry in analysis.series {
            for change in entry.analysis.changePoints {
                let run = analysis.run(of: change, in: entry)
                lines.append(
                    "  \(entry.series.key): stepped \(HistoryText.percent(change)) at \(run.provenance.commit)")
            }
        }
        for entry in analysis.series {
            guard let newest = entry.analysis.newestRunStep else { continue }
            lines.append(
                "  \(entry.series.key): the newest run alone moved \(HistoryText.percent(newest)) "
                    + "(a step if the next runs stay there)")
        }
        Terminal.result((lines + ["Report: \(out)/history.md"]).joined(separator: "\n"))
    }
}

struct HistoryGateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gate",
        abstract: "Exit 2 when the newest run starts a step up above the noise in a figure its scenario gates on.",
        discussion: "The gated figures are each scenario's ranking figure, its thresholds' figures and the figure a "
            + "baseline keeps. The step is judged against the series' own noise: no tolerance to set. A step down "
            + "is reported and passes."
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var filter: RunFilterOptions

    func run() throws {
        let analysis = try store.analysis(filter.filter).analysis
        let verdict = HistoryGateVerdict(analysis)
        Terminal.result(HistoryText.gate(verdict, analysis: analysis))
        if verdict.failed { throw ExitCode(ExitStatus.finding.code) }
    }
}

struct HistoryDiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "What moved between two runs: figures beyond their noise, allocation sites, types.",
        discussion: "A and B are commits (or SHA prefixes: the newest run of the commit) or record ids. Sites are "
            + "compared where both runs were made with --attribute (a differential flame graph: grown vermilion, "
            + "shrunk blue), types where both were made with --heap-graph."
    )

    @Argument(help: .value("a", "The earlier run: a commit or a record id.")) var before: String
    @Argument(help: .value("b", "The later run: a commit or a record id.")) var after: String
    @OptionGroup var store: StoreOptions
    @Option(help: .value("dir", "Also write diff.md, flames/*.svg and folded/*.txt into this folder.")) var out: String?

    func run() throws {
        let (history, table, analysis) = try store.analysis(RunFilter())
        let diff = try Terminal.orFail { () throws(HistoryError) in
            let a = try table.run(named: before)
            let b = try table.run(named: after)
            return HistoryDiff(
                before: (a, try history.record(a.id)), after: (b, try history.record(b.id)), analysis: analysis)
        }
        if let out {
            try Terminal.orFail { () throws(ReportError) in
                try ReportFolder.write(HistoryText.diffFiles(diff), to: out, kind: HistoryText.diffFolderKind)
            }
        }
        Terminal.result(HistoryText.diffMarkdown(diff))
    }
}

struct HistoryBisectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bisect",
        abstract: "For `git bisect run`: build, run one scenario, compare one figure with a limit.",
        discussion: """
            Exit 0 (good) when the strategy's median of the figure is at most --limit, 1 (bad) when above, 125 \
            (skip this commit) when --build fails or the figure could not be measured. Typical use: git bisect \
            start BAD GOOD; git bisect run memharness history bisect --scenario S --strategy T --figure \
            peakAllocated --limit 64MiB --build 'make'.
            """
    )

    /// `git bisect run`'s code for a commit that cannot be tested.
    static let skip: Int32 = 125

    @Option(help: .value("scenario", "The scenario file or name to run.")) var scenario: String
    @Option(help: .value("name", "The strategy whose figure is compared.")) var strategy: String
    @Option(help: .value("figure", "The figure, as a threshold names it: peakAllocated, exactPeak, metrics.NAME..."))
    var figure = "peakAllocated"
    @Option(help: .value("limit", "The largest good value: a size (64MiB) for a byte figure, else a number."))
    var limit: String
    @Option(help: .value("command", "A shell command that builds the commit first (sh -c); failing skips the commit."))
    var build: String?
    @Option(help: .value("dir", "Folder searched for scenario names.")) var scenariosDir = "Scenarios"
    @Option(
        name: .customLong("repeat"), parsing: .unconditional,
        help: .value("n|auto", "Repetitions per strategy, as `run --repeat` takes them (default: the scenario's)."))
    var repetitions: RepetitionPolicy?
    @Option(help: .value("dir", "Folder the run's report is written to.")) var out = "Reports/bisect"

    func validate() throws {
        guard let figure = Figure(name: figure) else {
            throw ValidationError("--figure '\(figure)': expected one of: " + Figure.nameForms.joined(separator: ", "))
        }
        if Self.limit(limit, bytes: figure.isBytes) == nil {
            throw ValidationError(
                "--limit '\(limit)': expected " + (figure.isBytes ? "a size such as 64MiB" : "a number"))
        }
        // The limits table `run` checks: a value the planner would refuse is refused here, before any build.
        try ValidationError.check(OptionRanges.problem(repetitions: repetitions))
    }

    static func limit(_ text: String, bytes: Bool) -> Double? {
        bytes ? Units.parseBytes(text).map(Double.init) : Double(text)
    }

    func run() throws {
        guard let figure = Figure(name: figure), let limit = Self.limit(limit, bytes: figure.isBytes) else {
            throw ExitCode(ExitStatus.usage.code)
        }
        if let build { try Self.build(build) }
        var request = RunRequest(scenarios: [scenario], scenariosDirectory: scenariosDir)
        request.options = RunOptions(repetitions: repetitions)
        let outcome: RunOutcome
        do {
            outcome = try Publishing.run(request, output: RunOutput(directory: out), display: .parse(["--quiet"]))
        } catch {
            Terminal.note("history bisect: the scenario could not be run: skip this commit (\(Self.skip))")
            throw ExitCode(Self.skip)
        }
        let reference = FigureReference(strategy: strategy, figure: figure)
        guard let run = outcome.record.report.scenarios.first,
            let value = ThresholdEvaluator.median(reference, in: run)?.median
        else {
            Terminal.note("history bisect: \(reference) was not measured (no completed case): skip this commit")
            throw ExitCode(Self.skip)
        }
        let good = value <= limit
        Terminal.result(
            "history bisect: \(run.name) \(reference) = \(figure.format(value)), limit \(figure.format(limit)): "
                + (good ? "good" : "bad"))
        if !good { throw ExitCode(1) }
    }

    /// Runs the build command (sh -c) with this process's streams, at most an hour; any failure skips the commit.
    static func build(_ command: String) throws {
        let environment = ProcessInfo.processInfo.environment
        let ended = try? ChildProcess.spawn(
            path: "/bin/sh", arguments: ["-c", command], environment: environment, stdout: STDERR_FILENO,
            stderr: STDERR_FILENO
        ).wait(upTo: 3_600_000_000_000)
        guard case .ended(let end)? = ended, end.termination == .exited(0) else {
            Terminal.note("history bisect: the build (\(command)) failed: skip this commit (\(skip))")
            throw ExitCode(skip)
        }
    }
}
