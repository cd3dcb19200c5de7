import Foundation
import HarnessModel
import Runner
import Scenarios
import Synchronization
import Testing
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// The case process's half of the exchange, run in this process: the spec file in, the outcome file out,
/// the exit code and message the process ends with.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct CaseProcessTests {
    let catalog = WorkloadCatalog([HoldWorkload()])

    func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("memharness-case-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    /// The first case of a `HoldWorkload` scenario, as the runner plans it.
    func spec() throws -> CaseSpec {
        var request = RunRequest()
        request.inlineScenarios = [
            try ScenarioParser(catalog: catalog).parse("scenario: s\nworkload: hold\nsettle: 0ms\n", file: "s.yaml")
        ]
        return try #require(try RunPlanner.plan(request, catalog: catalog).cases.first { $0.strategy == "large" })
    }

    @Test func runsTheSpecAndWritesTheOutcomeTheRunnerReads() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let spec = try spec()
        try JSONEncoder().encode(spec).write(to: URL(fileURLWithPath: "\(directory)/spec.json"))
        try FileManager.default.createDirectory(atPath: "\(directory)/scratch", withIntermediateDirectories: true)
        let process = CaseProcess(
            specFile: "\(directory)/spec.json", resultFile: "\(directory)/result.json",
            scratchDirectory: "\(directory)/scratch")
        let reports = Mutex<[String]>([])
        let end = process.run(catalog: catalog) { message in reports.withLock { $0.append(message) } }
        // The case set its own time limit, the runner's and 30 s more; it is cancelled here, as the process
        // that set it is not ending.
        let remaining = alarm(0)
        #expect(remaining > 0 && remaining <= CaseProcess.selfTimeLimitSeconds(for: spec))
        #expect(CaseProcess.selfTimeLimitSeconds(for: spec) == UInt32(spec.timeoutNanoseconds / 1_000_000_000 + 30))
        #expect(end == CaseProcess.End(code: CaseExitCode.done))
        #expect(reports.withLock { $0 }.isEmpty)
        let outcome = try JSONDecoder().decode(
            CaseOutcome.self, from: Data(contentsOf: URL(fileURLWithPath: "\(directory)/result.json")))
        guard case .completed(let measurements) = outcome else {
            Issue.record("the case did not complete: \(outcome)")
            return
        }
        // The sampled net peak is stated ± its floor: the block must show within it.
        let floor = try #require(measurements.peakUncertaintyBytes, "a completed case states its floor")
        #expect(
            measurements.peakAllocatedNetBytes >= (8 << 20) - floor,
            "the probe saw the 8 MiB block held by the case: \(measurements.peakAllocatedNetBytes) B ± \(floor) B")
    }

    @Test func anUnreadableSpecEndsTheProcessAsAHarnessFailureSayingWhy() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("{\"scenario\": 1}".utf8).write(to: URL(fileURLWithPath: "\(directory)/spec.json"))
        for file in ["\(directory)/spec.json", "\(directory)/missing.json"] {
            let process = CaseProcess(
                specFile: file, resultFile: "\(directory)/result.json", scratchDirectory: directory)
            let end = process.run(catalog: catalog) { _ in }
            #expect(end.code == CaseExitCode.harnessFailure)
            #expect(end.message?.hasPrefix("cannot read case spec \(file): ") == true, "\(end)")
        }
        #expect(alarm(0) == 0, "no alarm before the spec is read")
        #expect(!FileManager.default.fileExists(atPath: "\(directory)/result.json"))
    }

    @Test func anOutcomeIsWrittenAsTheRunnerReadsItOrTheReasonItCannotBe() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outcome = CaseOutcome.notMeasured(reason: "a reason")
        #expect(CaseProcess.write(outcome, to: "\(directory)/result.json") == nil)
        let read = try JSONDecoder().decode(
            CaseOutcome.self, from: Data(contentsOf: URL(fileURLWithPath: "\(directory)/result.json")))
        #expect(read == outcome)
        let problem = CaseProcess.write(outcome, to: "\(directory)/no-such-folder/result.json")
        #expect(problem?.hasPrefix("cannot write the result \(directory)/no-such-folder/result.json: ") == true)
    }
}
