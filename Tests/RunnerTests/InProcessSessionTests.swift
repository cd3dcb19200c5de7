import FileIO
import Foundation
import HarnessModel
import Reports
import Runner
import Scenarios
import Testing
import WorkloadKit

/// A whole `RunSession` with the `InProcessCaseLauncher`: plan, cases run in this process (no case process),
/// report; then its publication (record, checks, the report folder), chained as `memharness run` chains them.
/// The session's cleanup guard is the one helper process it starts.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct InProcessSessionTests {
    let catalog = WorkloadCatalog([HoldWorkload()])

    func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "memharness-session-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    /// A request for one scenario of `HoldWorkload` whose text adds `extra` lines (thresholds).
    func request(_ extra: String = "") throws -> RunRequest {
        let text = "scenario: hold\nworkload: hold\nrepetitions: 2\nsettle: 0ms\n" + extra
        var request = RunRequest()
        request.inlineScenarios = [try ScenarioParser(catalog: catalog).parse(text, file: "hold.yaml")]
        return request
    }

    /// The run's stages as the command line chains them: `RunSession.run` to the report while the folder is
    /// held, then `RunPublication.publish`.
    func runAndPublish(
        _ request: RunRequest, launcher: some CaseLaunching, output: RunOutput,
        events: (RunEvent) -> Void = { _ in }
    ) throws -> RunOutcome {
        let folder = RunFolder(output.directory)
        defer { folder.release() }
        let report = try RunSession.run(
            request, catalog: catalog, launcher: launcher, folder: folder, baseline: output.baseline,
            toolVersion: "test", events: events)
        #expect(
            !FileManager.default.fileExists(atPath: "\(output.directory)/run.json"), "the runner stops at the report")
        let outcome = try #require(try RunPublication.publish(report, to: output))
        folder.reportPublished()
        return outcome
    }

    @Test func aRunInThisProcessMeasuresEachCaseAndWritesTheReportFolder() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let out = "\(directory)/report"
        var events: [String] = []  // the cases that ended, by label
        let outcome = try runAndPublish(
            try request(), launcher: InProcessCaseLauncher(catalog: catalog, scratchRoot: directory),
            output: RunOutput(directory: out)
        ) { event in
            if case .finished(_, _, let result, _) = event { events.append(result.label) }
        }
        #expect(outcome.status == .ok)
        #expect(events.count == 4, "\(events)")
        let cases = outcome.record.report.scenarios.flatMap(\.cases)
        #expect(cases.map(\.status) == Array(repeating: .ok, count: 4))
        // The probe saw each live block: at least its size above the baseline. (No upper bound: jemalloc's
        // figures are the process's, and tests running beside this one allocate too.)
        for result in cases {
            let net = try #require(result.completed?.peakAllocatedNetBytes)
            let held = result.strategy == "large" ? 8 << 20 : 2 << 20
            #expect(net >= held, "\(result.label): \(net) B, holding \(held) B")
        }
        #expect(outcome.record.report.environment.toolVersion == "test")
        // The folder is the record and its renderings; reading it back gives the record the run returned.
        for file in ["run.json", "report.md", "summary.csv", "samples.csv"] {
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(file)"), "\(file)")
        }
        #expect(try ReportFolder.read(out) == outcome.record)
        #expect(outcome.warnings.isEmpty)
    }

    @Test func theSessionGatesTheRunOnItsThresholds() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let thresholds =
            "thresholds:\n  large:\n    peakAllocated: <= 1MiB\n  relative:\n"
            + "    - small.peakAllocated <= large.peakAllocated\n"
        let outcome = try runAndPublish(
            try request(thresholds), launcher: InProcessCaseLauncher(catalog: catalog),
            output: RunOutput(directory: "\(directory)/report"))
        #expect(outcome.record.checks.count == 2)
        #expect(outcome.record.checks.filter { !$0.passed }.map(\.strategy) == ["large"])
        #expect(outcome.status == .finding)
        let quick = try runAndPublish(
            try request(thresholds), launcher: InProcessCaseLauncher(catalog: catalog),
            output: RunOutput(directory: "\(directory)/quick", gate: GatePolicy(checkThresholds: false)))
        #expect(quick.record.checks.isEmpty)
        #expect(quick.status == .ok)
    }

    @Test func casesThatNeedACaseProcessAreRefusedBeforeAnyWork() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var request = try request()
        request.options.attribution = AttributionRequest(sampleMeanBytes: 1 << 16)
        let launcher = InProcessCaseLauncher(catalog: catalog)
        #expect(launcher.agentProblem != nil, "the test process does not count allocations")
        #expect(throws: RunSessionError.self) {
            try RunSession.run(
                request, catalog: catalog, launcher: launcher, folder: RunFolder("\(directory)/report"),
                toolVersion: "test")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(directory)/report"), "nothing was written")
    }
}
