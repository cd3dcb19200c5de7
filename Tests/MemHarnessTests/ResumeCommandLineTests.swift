import ChildProcesses
import FileIO
import Foundation
import HarnessModel
import Reports
import Runner
import TestSupport
import Testing
import WorkloadKit

/// `memharness run` stopped by SIGINT and continued with `--resume`, end to end against the built binary.
@Suite(.serialized)
struct ResumeCommandLineTests {
    /// Ten cases of about 150 ms each: long enough to be interrupted between the third and the last.
    static let scenario = """
        scenario: resume
        workload: calibration
        parameters:
          holdSize: 256KiB
          objectCount: 64
        strategies: [hold-large, hold-small-objects]
        steps:
          - allocate
          - idle: 100ms
          - release
        repetitions: 5
        settle: 10ms

        """

    /// The finished cases the journal of the run into `out` holds.
    static func journaled(_ out: String) -> [String] {
        let journal = URL(fileURLWithPath: out).deletingLastPathComponent().appendingPathComponent(".out.journal").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: journal)) ?? []
        return names.filter { $0.hasPrefix("case-") && $0.hasSuffix(".json") }.map { "\(journal)/\($0)" }
    }

    /// One finished case as the journal keeps it.
    struct Entry: Decodable {
        var result: CaseResult
    }

    /// (strategy, repetition) of every case of a record, in report order.
    static func cases(_ record: RunRecord) -> [String] {
        record.report.scenarios.flatMap(\.cases).map { "\($0.strategy) #\($0.repetition)" }
    }

    @Test(.timeLimit(.minutes(3)))
    func anInterruptedRunResumesToTheReportOfAnUninterruptedOne() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("memharness-resume-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = "\(folder)/resume.yaml"
        try Self.scenario.write(toFile: file, atomically: true, encoding: .utf8)
        let out = "\(folder)/out"

        // Started as a shell starts it (no signal blocked: a test's thread blocks them, and a child of
        // Foundation's Process would inherit the mask). Bounded waits: a run that never journals three
        // cases, or ignores the signal, fails the test.
        let run = try ChildProcess.spawn(
            path: CommandLineTests.binary, arguments: ["run", file, "--out", out, "--quiet"],
            environment: ProcessInfo.processInfo.environment)
        var ended = try run.wait(timeoutNanoseconds: 0)
        let started = waitUntil(seconds: 60) {
            // A failed wait reads as "still running" here; the bounded wait below throws it.
            ended = ended ?? ((try? run.wait(timeoutNanoseconds: 0)) ?? nil)
            return Self.journaled(out).count >= 3 || ended != nil
        }
        run.send(SIGINT)
        ended = try ended ?? run.wait(timeoutNanoseconds: 30_000_000_000) ?? run.kill()
        try #require(started && ended != nil, "the run journaled three cases and ended")
        #expect(ended?.termination == .exited(128 + SIGINT), "stopped by SIGINT: \(String(describing: ended))")
        #expect(!FileManager.default.fileExists(atPath: "\(out)/run.json"), "an interrupted run writes no report")
        let entries = try Self.journaled(out).map {
            try JSONDecoder().decode(Entry.self, from: Data(contentsOf: URL(fileURLWithPath: $0))).result
        }
        try #require(entries.count >= 3 && entries.count < 10, "\(entries.count) cases journaled")

        let resumed = try CommandLineTests().memharness(["run", file, "--out", out, "--resume", "--verbose"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let lines = resumed.stderr.split(separator: "\n").filter { $0.hasPrefix("[") }
        #expect(lines.filter { $0.hasSuffix("(resumed)") }.count == entries.count)
        #expect(lines.count == 10, "each case once: \(entries.count) from the journal, the others run")
        #expect(Self.journaled(out).isEmpty, "the journal goes once the report is written")

        let record = try ReportFolder.read(out)
        let results = record.report.scenarios.flatMap(\.cases)
        for entry in entries {
            let reported = results.first { $0.strategy == entry.strategy && $0.repetition == entry.repetition }
            #expect(reported == entry, "\(entry.label) is reported as the interrupted run measured it")
        }
        for (path, data) in ReportBundle.renderings(record) {
            #expect(FileManager.default.contents(atPath: "\(out)/\(path)") == data, "\(path) renders run.json")
        }

        let whole = try CommandLineTests().memharness(["run", file, "--out", "\(folder)/whole", "--quiet"])
        #expect(whole.status == 0, "\(whole.stderr)")
        let uninterrupted = try ReportFolder.read("\(folder)/whole")
        #expect(Self.cases(record) == Self.cases(uninterrupted), "the same cases in the same order")
        #expect(results.allSatisfy { $0.status == .ok })
        let names = { (path: String) in Set(try FileManager.default.subpathsOfDirectory(atPath: path)) }
        #expect(try names(out) == names("\(folder)/whole"), "the same files")
    }
}
