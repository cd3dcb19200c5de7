import Foundation
import HarnessModel
import Testing

@testable import History
@testable import Reports

@Suite struct DiffAndRenderingTests {
    static func run(_ index: Int) -> HistoryRun {
        HistoryRun(
            id: "id\(index)",
            provenance: Provenance(
                commit: "c\(index)", branch: "main", time: "2026-01-0\(index)T00:00:00Z", machine: "m"),
            runAt: "2026-01-0\(index)T00:00:00Z")
    }

    static func record(peak: Double, sites: [String: Int], types: [String: Int]) -> HistoryRecord {
        let key = SeriesKey(scenario: "s", strategy: "t", figure: "peakAllocated")
        let steady = SeriesKey(scenario: "s", strategy: "t", figure: "residue")
        return HistoryRecord(
            provenance: Provenance(commit: "c", branch: "", time: "", machine: ""), runAt: "",
            figures: [
                RecordedFigure(key: key, value: peak, repetitions: 3, gated: true, isBytes: true),
                RecordedFigure(key: steady, value: 4096, repetitions: 3, gated: false, isBytes: true),
            ],
            sites: [RecordedSites(scenario: "s", strategy: "t", stacks: sites)],
            types: [RecordedTypes(scenario: "s", strategy: "t", bytes: types, counts: types.mapValues { $0 / 64 })])
    }

    @Test func aDiffListsTheFiguresSitesAndTypesThatMoved() throws {
        let before = Self.record(
            peak: 1_048_576, sites: ["main;load;cache": 1_000_000, "main;parse": 48_576], types: ["Cache": 640])
        let after = Self.record(
            peak: 2_097_152, sites: ["main;load;cache": 2_000_000, "main;parse": 97_152], types: ["Cache": 1280])
        let table = HistoryTable(runs: [Self.run(1), Self.run(2)], series: [])
        let diff = HistoryDiff(
            before: (Self.run(1), before), after: (Self.run(2), after), analysis: HistoryAnalysis(table))
        #expect(diff.figures.map(\.key.figure) == ["peakAllocated"] && diff.steadyFigures == 1)
        #expect(diff.types.map(\.type) == ["Cache"] && diff.types.first?.bytesAfter == 1280)
        let moves = DifferentialFlameGraph.leafMoves(try #require(diff.sites.first))
        #expect(moves.map(\.function) == ["cache", "parse"] && moves.first?.delta == 1_000_000)
        let folded = DifferentialFlameGraph.folded(try #require(diff.sites.first))
        #expect(folded == "main;load;cache 1000000 2000000\nmain;parse 48576 97152\n")
        let files = HistoryText.diffFiles(diff)
        #expect(files.map(\.path) == ["diff.md", "flames/s--t--sites.svg", "folded/s--t--sites.txt"])
        let svg = String(decoding: files[1].data, as: UTF8.self)
        // Grown boxes are vermilion (a tint of #D55E00); the root grew too.
        #expect(svg.contains("<title>cache: 976.56 KiB → 1.91 MiB</title>") && svg.contains("fill=\"#"))
        #expect(HistoryText.diffMarkdown(diff).contains("| s | `t` | peakAllocated | 1.00 MiB | 2.00 MiB | +100.0%"))
    }

    @Test func aDiffNamesTheLeakSignaturesThatAreNewAndGone() throws {
        func record(_ signatures: [String]) -> HistoryRecord {
            var record = Self.record(peak: 1_048_576, sites: [:], types: ["Cache": 640])
            record.types[0].leaks = signatures.map {
                LeakSignatureTally(
                    signature: $0, groups: 20, bytes: 2048,
                    rootType: HeapTypeName(name: "App.Session", kind: .swiftObject))
            }
            record.types[0].omittedLeakGroups = 0
            return record
        }
        let table = HistoryTable(runs: [Self.run(1), Self.run(2)], series: [])
        let diff = HistoryDiff(
            before: (Self.run(1), record(["aaaa", "bbbb"])), after: (Self.run(2), record(["bbbb", "cccc"])),
            analysis: HistoryAnalysis(table))
        let change = try #require(diff.signatures.first?.change)
        #expect(change.new.map(\.signature) == ["cccc"] && change.gone.map(\.signature) == ["aaaa"] && change.kept == 1)
        let markdown = HistoryText.diffMarkdown(diff)
        #expect(markdown.contains("| s | `t` | new | `cccc` | App.Session | 20 | 2.00 KiB |"))
        #expect(markdown.contains("| s | `t` | gone | `aaaa` | App.Session | 20 | 2.00 KiB |"))
        // The same signatures in both runs: nothing to list; a record of before signatures were kept: nothing either.
        let same = HistoryDiff(
            before: (Self.run(1), record(["aaaa"])), after: (Self.run(2), record(["aaaa"])),
            analysis: HistoryAnalysis(table))
        #expect(same.signatures.isEmpty)
        let old = HistoryDiff(
            before: (Self.run(1), Self.record(peak: 1_048_576, sites: [:], types: ["Cache": 640])),
            after: (Self.run(2), record(["aaaa"])), analysis: HistoryAnalysis(table))
        #expect(old.signatures.isEmpty)
    }

    @Test func theHistoryReportHasAChartPerSeriesWithItsChangePoints() throws {
        let values = [1.0, 1, 1, 1, 2, 2, 2, 2].map { $0 * 1_048_576 }
        let series = HistorySeries(
            key: SeriesKey(scenario: "s", strategy: "t", figure: "peakAllocated"), isBytes: true, gated: true,
            runIndices: Array(0..<8), values: values)
        let analysis = HistoryAnalysis(HistoryTable(runs: (1...8).map(Self.run), series: [series]))
        let files = HistoryReport.files(analysis)
        #expect(files.map(\.path) == ["history.md", "charts/s--t--peakAllocated.svg"])
        let markdown = String(decoding: files[0].data, as: UTF8.self)
        #expect(markdown.contains("| s | `t` | peakAllocated (gated) | `c5` | 1.00 MiB | 2.00 MiB | +100.0% | 4 / 4 |"))
        let chart = String(decoding: files[1].data, as: UTF8.self)
        #expect(chart.contains("c5 +100.0%") && chart.contains("change points at c5 from 1.00 MiB to 2.00 MiB"))
    }

    @Test func provenanceComesFromOptionsThenGitThenTheCI() {
        let report = RunReport(
            generatedAt: "2026-11-27T01:00:00Z", environment: StoreFixture.environment, scenarios: [])
        let outside = FileManager.default.temporaryDirectory.path
        let fromCI = ProvenanceReader.read(
            directory: "/nonexistent-folder", report: report, overrides: .init(machine: "box"),
            environment: ["GITHUB_SHA": "abc123", "GITHUB_REF_NAME": "main", "PATH": "/nonexistent"])
        #expect(fromCI == Provenance(commit: "abc123", branch: "main", time: "2026-11-27T01:00:00Z", machine: "box"))
        let given = ProvenanceReader.read(
            directory: outside, report: report,
            overrides: .init(commit: "def", branch: "b", time: "2026-11-27T03:30:00+02:00", machine: "m"),
            environment: ["GITHUB_SHA": "abc123"])
        #expect(given == Provenance(commit: "def", branch: "b", time: "2026-11-27T01:30:00Z", machine: "m"))
        #expect(ProvenanceReader.utc("yesterday") == nil)
    }
}
