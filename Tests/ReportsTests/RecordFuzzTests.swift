import FileIO
import Foundation
import HarnessModel
import Reports
import TestSupport
import Testing
import Verdicts

/// Property tests of the readers of report folders: thousands of mutations of valid `run.json` and
/// baseline files (bytes flipped, truncated, numbers replaced by NaN, infinities and values far out
/// of range, keys swapped and repeated), each read and, when it is accepted, rendered and checked as
/// `report`, `compare`, `merge` and `baseline save` do. The property: a value or a `ReportError`
/// naming the file, never a trap; an accepted record renders. Deterministic: the seed and the index
/// of a failing input reproduce it (set `MEMHARNESS_FUZZ_DUMP` to a path to have every input written
/// there before it is read, so the last one survives a trap).
@Suite(.timeLimit(.minutes(2)))
struct RecordFuzzTests {
    /// Inputs per test; `MEMHARNESS_FUZZ_INPUTS` changes it (more for a long run, fewer while debugging).
    static let inputs = ProcessInfo.processInfo.environment["MEMHARNESS_FUZZ_INPUTS"].flatMap { Int($0) } ?? 10_000

    /// Records that exercise every part of the format: thresholds of both kinds, checks, a sweep,
    /// exact peaks, a crashed case.
    static var records: [RunRecord] {
        var report = ReportFixture.exactReport()
        report.scenarios[0].thresholds = [
            Threshold(
                subject: FigureReference(strategy: "signal-next", figure: .peakAllocated), comparison: .lessOrEqual,
                limit: .absolute(33_554_432), text: "signal-next.peakAllocated <= 32MiB", file: "f.yaml", line: 3,
                column: 5),
            Threshold(
                subject: FigureReference(strategy: "signal-next", figure: .metric("stalenessP99")),
                comparison: .less,
                limit: .relative(
                    factor: 0.5, of: FigureReference(strategy: "unbounded-dispatch", figure: .metric("stalenessP99"))),
                text: "signal-next.metrics.stalenessP99 < 0.5 * unbounded-dispatch.metrics.stalenessP99",
                file: "f.yaml", line: 4, column: 5),
        ]
        let run = report.scenarios[0]
        report.sweeps = [
            SweepSummary(
                scenario: "live-query", key: "burst.duration",
                points: [
                    (label: "1s", value: .duration(nanoseconds: 1_000_000_000), run: run),
                    (label: "2s", value: .duration(nanoseconds: 2_000_000_000), run: run),
                ])
        ]
        let baseline = BaselineReference(baseline: Baseline(name: "b", report: report), file: "b.json")
        let checks = CheckWording.results(Gate.checks(for: report, baseline: baseline))
        // Few cases and few samples: every accepted input is rendered, thousands of times in a debug build.
        report.scenarios[0].cases = [0, 1, 4].map { report.scenarios[0].cases[$0] }
        var plain = ReportFixture.report
        plain.scenarios[0].cases = [2, 3].map { plain.scenarios[0].cases[$0] }
        return [
            ReportBundle.record(report, checks: checks, rendering: RenderingOptions(samplesMaxRows: 3)),
            ReportBundle.record(plain, checks: [], rendering: RenderingOptions(samplesMaxRows: 2, chartScale: .log)),
        ]
    }

    /// Everything the commands do with an accepted record.
    static func exercise(_ record: RunRecord) throws {
        _ = try ReportBundle.files(record)
        let report = record.report
        let baseline = BaselineReference(baseline: Baseline(name: "b", report: report), file: "b.json")
        let judged = Gate.checks(for: report, baseline: baseline)
        _ = Gate.status(of: report, checks: judged)
        let checks = CheckWording.results(judged)
        _ = CheckOutputs.terminalTable(checks, width: 100)
        _ = CheckOutputs.junit(checks)
        _ = CheckOutputs.benchmarkJSON(report)
        _ = CheckOutputs.githubAnnotations(checks)
        _ = CheckOutputs.markdown(checks)
        _ = RunReport.merged([report, report])
    }

    @Test func theFixturesAreAcceptedAndRender() throws {
        for record in Self.records {
            let decoded = try RecordCodec.decode(try RecordCodec.encode(record), file: "run.json")
            #expect(decoded == record)
            try Self.exercise(decoded)
        }
    }

    @Test func mutatedRecordsAreReadOrRefusedWithAPlaceNeverATrap() throws {
        let bases = try Self.records.map { Array(try RecordCodec.encode($0)) }
        var random = FuzzRandom(seed: 0x5EED_0001)
        let dump = ProcessInfo.processInfo.environment["MEMHARNESS_FUZZ_DUMP"]
        var accepted = 0
        var refused = 0
        for index in 0..<Self.inputs {
            var bytes = random.pick(bases)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                bytes = Mutation.mutate(
                    bytes, fragments: ["{\"a\": 1}", "[[[[[[", "\"schema\": \"x\","], using: &random)
            }
            if let dump { _ = FileManager.default.createFile(atPath: dump, contents: Data(bytes)) }
            do {
                let record = try RecordCodec.decode(Data(bytes), file: "run.json")
                try Self.exercise(record)
                accepted += 1
            } catch let error as ReportError {
                refused += 1
                let message = error.description
                #expect(message.hasPrefix("run.json"), "input \(index): \(message)")
                #expect(!message.contains("\n") && message.count < 600, "input \(index): \(message)")
            }
        }
        // The mutations must reach the renderers, not only the syntax check.
        #expect(accepted > Self.inputs / 20, "accepted \(accepted), refused \(refused)")
        #expect(refused > Self.inputs / 4, "accepted \(accepted), refused \(refused)")
    }

    @Test func mutatedBaselinesAreReadOrRefusedWithAPlace() throws {
        let record = Self.records[0]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let base = Array(try encoder.encode(Baseline(name: "default", report: record.report)))
        var random = FuzzRandom(seed: 0x5EED_0002)
        var accepted = 0
        for index in 0..<Self.inputs {
            var bytes = base
            for _ in 0..<Int.random(in: 1...3, using: &random) { bytes = Mutation.mutate(bytes, using: &random) }
            do {
                let baseline = try BaselineFile.decode(bytes, file: "b.json")
                accepted += 1
                for figures in baseline.cases.values {
                    #expect(
                        figures.values.allSatisfy { $0.isFinite && $0 >= 0 && $0 <= RecordCheck.numberMagnitudeLimit })
                }
                let checks = CheckWording.results(
                    Gate.checks(for: record.report, baseline: BaselineReference(baseline: baseline, file: "b.json")))
                _ = CheckOutputs.terminalTable(checks, width: 100)
            } catch {
                #expect(error.description.hasPrefix("b.json"), "input \(index): \(error)")
                #expect(!error.description.contains("\n"), "input \(index): \(error)")
            }
        }
        #expect(accepted > Self.inputs / 20)
    }

    @Test func csvParsingTakesAnyText() {
        var random = FuzzRandom(seed: 0x5EED_0003)
        // A small table with every kind of cell: quoted, with commas, quotes, line breaks, empty.
        let base = Array(
            ("scenario,strategy,failure,peak_allocated_net_bytes\r\n"
                + "live-query,signal-next,,10485760\r\n"
                + "live-query,deliver-on,\"Fatal error, \"\"quoted\"\"\r\nsecond line\",\r\n").utf8)
        for _ in 0..<Self.inputs {
            var bytes = base
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes = Mutation.mutate(bytes, fragments: ["\"", "\"\"", ",", "\r", "\n"], using: &random)
            }
            let rows = CSVTable.parse(String(decoding: bytes, as: UTF8.self))
            #expect(rows.allSatisfy { !$0.isEmpty })
        }
    }
}
