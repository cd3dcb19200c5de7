import FileIO
import Foundation
import HarnessModel
import Reports
import TestSupport
import Testing

/// What a command shows and writes besides the report folder, from a record.
struct PublicationTests {
    static var record: RunRecord {
        let check = CheckResult(
            kind: .threshold, scenario: "live-query", strategy: "signal-next",
            name: "signal-next.peakAllocated <= 1MiB",
            passed: false, actual: "9.54 MiB", limit: "1.00 MiB", margin: "-854.0%", message: "breaks it",
            file: "Scenarios/live-query.yaml", line: 12, column: 7)
        return RunRecord(report: ReportFixture.report, checks: [check])
    }

    func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("memharness-pub-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    @Test func theResultsAreTheReadingsWhereTheReportIsAndTheCheckTable() {
        let publication = Publication(Self.record, folder: "out")
        let reading = ScenarioSummary(ReportFixture.report.scenarios[0]).reading
        #expect(reading.contains("`"), "the reading has Markdown to take out")
        #expect(
            publication.results
                == "live-query: \(reading.replacingOccurrences(of: "`", with: ""))\nReport: out/report.md\n"
                + CheckOutputs.terminalTable(Self.record.checks, width: 100))
        #expect(!publication.results.contains("`signal-next`"))
        #expect(
            Publication(RunRecord(report: ReportFixture.report, checks: []), folder: "o").results.hasSuffix(
                "Report: o/report.md\n"))
        #expect(publication.files.isEmpty && publication.annotations == nil && publication.stepSummary == nil)
    }

    @Test func writesTheJUnitAndBenchmarkFilesAskedFor() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let publication = Publication(
            Self.record, folder: "out", junit: "\(directory)/junit.xml", json: "\(directory)/bench.json")
        #expect(publication.files.map(\.path) == ["\(directory)/junit.xml", "\(directory)/bench.json"])
        try publication.writeFiles()
        #expect(
            try String(contentsOfFile: "\(directory)/junit.xml", encoding: .utf8)
                == CheckOutputs.junit(Self.record.checks))
        #expect(
            try String(contentsOfFile: "\(directory)/bench.json", encoding: .utf8)
                == CheckOutputs.benchmarkJSON(Self.record.report))
        let nowhere = Publication(Self.record, folder: "out", junit: "\(directory)/junit.xml/inside.xml")
        #expect(throws: ReportError.self) { try nowhere.writeFiles() }
    }

    @Test func githubGetsAnnotationsAndAStepSummaryAppendedToWhatIsThere() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let summary = "\(directory)/summary.md"
        let environment = ["GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary]
        let publication = Publication(Self.record, folder: "out", environment: environment)
        #expect(publication.annotations == CheckOutputs.githubAnnotations(Self.record.checks))
        #expect(publication.annotations?.hasPrefix("::error file=Scenarios/live-query.yaml,line=12,col=7,") == true)
        #expect(publication.appendStepSummary() == nil)
        #expect(publication.appendStepSummary() == nil)
        let text = try String(contentsOfFile: summary, encoding: .utf8)
        let one = try #require(publication.stepSummary?.text)
        #expect(text == one + one, "appended, not replaced")
        #expect(one.hasPrefix(CheckOutputs.markdown(Self.record.checks)))
        #expect(one.contains("- **live-query**: "))
        // Outside Actions, or with an empty path, neither.
        #expect(Publication(Self.record, folder: "out", environment: ["GITHUB_ACTIONS": "false"]).annotations == nil)
        #expect(Publication(Self.record, folder: "out", environment: ["GITHUB_STEP_SUMMARY": ""]).stepSummary == nil)
        let unwritable = Publication(
            Self.record, folder: "out", environment: ["GITHUB_STEP_SUMMARY": "\(directory)/no/such/summary.md"])
        #expect(
            unwritable.appendStepSummary() == "could not append to GITHUB_STEP_SUMMARY \(directory)/no/such/summary.md")
    }

    @Test func closingNoticesNameEachCaseThatDidNotCompleteThenTheTimeAndTheWarnings() {
        var report = ReportFixture.report
        report.scenarios[0].cases.append(
            CaseResult.draft(
                scenario: "live-query", workload: "live-query", strategy: "signal-next", repetition: 3,
                status: .killedByMemoryLimit))
        report.scenarios[0].thresholds = [
            Threshold(
                subject: FigureReference(strategy: "signal-next", figure: .peakAllocated), comparison: .lessOrEqual,
                limit: .absolute(1), text: "t", file: "f", line: 1, column: 1)
        ]
        report.elapsedNanoseconds = 2_000_000_000
        report.scenarios[0].cases[0].wallNanoseconds = 1_500_000_000
        let notices = Publication.closingNotices(report, warnings: ["index"], showTime: true, quick: true)
        let crashed = report.scenarios[0].cases.first { $0.status == .crashed }
        let killed = report.scenarios[0].cases.first { $0.status == .killedByMemoryLimit }
        #expect(notices.map(\.isError) == [false, true, false, false, false])
        #expect(
            notices[0].text
                == "note: --quick shortens the steps the thresholds were written for, so they were not checked")
        #expect(notices[1].text == "\(crashed?.label ?? ""): crashed: \(crashed?.failureText ?? "")")
        #expect(notices[2].text == "memory limit: \(killed?.label ?? ""): \(killed?.failureText ?? "")")
        #expect(notices[3].text.hasPrefix("time: "))
        #expect(notices[4].text == "warning: index")
        #expect(Publication.closingNotices(report).count == 2, "no quick note, no time, no warnings unless asked")
    }

    @Test func aProfileSummaryGivesEachRunsFigures() {
        let summary = Publication.profileSummary(ReportFixture.report, folder: "out")
        let lines = summary.split(separator: "\n")
        #expect(lines.count == 5, "four measured runs and the report; the crashed case has no figures")
        #expect(
            lines.first?.hasPrefix("live-query / unbounded-dispatch #1: peak allocated 135.42 MiB above its start")
                == true)
        #expect(lines.first?.contains("peak RSS ") == true)
        #expect(lines.last == "Report: out/report.md")
    }
}
