import ArgumentParser
import Foundation
import HarnessModel
import Reports

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Regenerate report.md and the charts of a report folder from its summary.csv and samples.csv.",
        discussion: "The CSV files are the source of truth; run.json, when present, supplies descriptions, parameters and the environment."
    )

    @Argument(help: ArgumentHelp("A report folder with summary.csv (and samples.csv for charts).", valueName: "dir"))
    var directory: String

    @Option(name: .long, help: ArgumentHelp("Value scale of the charts: auto, linear or log.", valueName: "scale"))
    var chartScale: ChartScaleArgument = .auto

    @Option(name: .long, help: ArgumentHelp("Also rewrite samples.csv with at most this many rows per case (neighbours merged keeping maxima).", valueName: "n"))
    var samplesMaxRows: Int?

    func validate() throws {
        if let samplesMaxRows, samplesMaxRows < 1 {
            throw ValidationError("--samples-max-rows must be 1 or more, got \(samplesMaxRows)")
        }
    }

    func run() throws {
        let fileManager = FileManager.default
        let report = try ReportFolder.load(directory)
        // Thresholds (from run.json) and leak verdicts are checked again, so the Checks section stays.
        let checks = try Gate.checks(for: report, options: GateOptions.parse([]))
        do {
            if let samplesMaxRows {
                try ReportFiles.atomicWrite(Data(SamplesCSV.render(report, maxRowsPerCase: samplesMaxRows).utf8), to: "\(directory)/samples.csv")
            }
            try fileManager.createDirectory(atPath: "\(directory)/charts", withIntermediateDirectories: true)
            let charts = ReportBundle.charts(report, scale: chartScale.scale)
            for (path, text) in charts {
                try ReportFiles.atomicWrite(Data(text.utf8), to: "\(directory)/\(path)")
            }
            try ReportFiles.atomicWrite(Data(MarkdownReport.render(report, charts: Set(charts.map(\.path)), checks: checks).utf8),
                                        to: "\(directory)/report.md")
        } catch {
            Terminal.error("\(error)")
            throw ExitCode(ExitCodes.harnessFailure)
        }
        print("Report: \(directory)/report.md")
    }
}
