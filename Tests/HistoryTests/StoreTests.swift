import FileIO
import Foundation
import HarnessModel
import Reports
import TestSupport
import Testing

@testable import History

/// Stores in temporary folders, filled with made-up runs.
struct StoreFixture {
    let root: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("history-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }

    func store(_ name: String = "store") throws -> HistoryStore {
        try HistoryStore(path: "\(root)/\(name)", create: true)
    }

    static let environment = EnvironmentInfo(
        toolVersion: "0", jemallocVersion: "5", jemallocSettings: [:], swiftVersion: "6", operatingSystem: "Linux",
        kernel: "6", cpuModel: "cpu", cpuCount: 2, memoryBytes: 1 << 30, requestedIntervalNanoseconds: 1_000_000)

    /// A run of scenario `s` where `signal` holds `net` bytes at its peak (three repetitions) and `unbounded` 10x.
    static func report(net: Int) -> RunReport {
        let cases = (1...3).flatMap { repetition in
            [
                RankingFixture.result("signal", repetition, net: net),
                RankingFixture.result("unbounded", repetition, net: net * 10),
            ]
        }
        return RunReport(
            generatedAt: "2026-11-27T00:00:00Z", environment: environment,
            scenarios: [RankingFixture.run(cases, strategies: ["unbounded", "signal"])])
    }

    /// The record of commit number `index` at minute `index`, `signal` holding `net` bytes.
    static func record(_ index: Int, net: Int) -> HistoryRecord {
        let provenance = Provenance(
            commit: String(format: "%040x", index + 1), branch: "main",
            time: "2026-11-27T00:\(String(format: "%02d", index)):00Z", machine: "m")
        return HistoryRecord(report: report(net: net), provenance: provenance)
    }
}

@Suite struct StoreTests {
    @Test func aRecordKeepsEachStrategysMediansAndWhichFiguresGate() throws {
        let record = StoreFixture.record(0, net: 4_000_000)
        let peak = try #require(
            record.figures.first { $0.key == SeriesKey(scenario: "s", strategy: "signal", figure: "peakAllocated") })
        #expect(peak.value == 4_000_000 && peak.repetitions == 3 && peak.gated && peak.isBytes)
        let phase = try #require(record.figures.first { $0.key.figure == "phases.burst.peakAllocated" })
        #expect(!phase.gated)
        #expect(record.figures.contains { $0.key.figure == "metrics.callbacks" })
    }

    /// A metric in bytes is a byte series (its quantum and the page cache's floor apply), as a metric counted is not.
    @Test func aMetricInBytesIsRecordedAsBytes() throws {
        let cases = (1...3).map { repetition in
            CaseResult.draft(strategy: "signal", repetition: repetition, status: .ok) { result in
                result.peak.allocatedBytes = 1_000_000
                result.metrics = [
                    Metric(name: "rssMappedFiles", value: Double(1_459 + repetition) * 4096, unit: .bytes),
                    Metric(name: "callbacks", value: Double(repetition), unit: .count),
                ]
            }
        }
        let report = RunReport(
            generatedAt: "2026-11-27T00:00:00Z", environment: StoreFixture.environment,
            scenarios: [RankingFixture.run(cases, strategies: ["signal"])])
        let record = HistoryRecord(
            report: report, provenance: Provenance(commit: "c", branch: "main", time: "t", machine: "m"))
        let mapped = try #require(record.figures.first { $0.key.figure == "metrics.rssMappedFiles" })
        let callbacks = try #require(record.figures.first { $0.key.figure == "metrics.callbacks" })
        #expect(mapped.isBytes && mapped.value == 1_461 * 4096 && mapped.key.followsPageCache)
        #expect(!callbacks.isBytes && !callbacks.key.followsPageCache)
    }

    @Test func recordingTheSameRunTwiceChangesNothing() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let store = try fixture.store()
        let first = try store.add(StoreFixture.record(0, net: 1_000_000))
        let second = try store.add(StoreFixture.record(0, net: 1_000_000))
        #expect(first.added && !second.added && first.id == second.id)
        #expect(try store.recordIDs() == [first.id])
        #expect(first.id.count == HistoryStore.idLength)
        let other = try store.add(StoreFixture.record(0, net: 1_000_001))
        #expect(other.id != first.id)
    }

    @Test func storesMergedByCopyingGiveTheSameHistory() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let (one, even, odd, merged) = try (
            fixture.store("one"), fixture.store("even"), fixture.store("odd"), fixture.store("merged")
        )
        for index in 0..<8 {
            let record = StoreFixture.record(index, net: index < 4 ? 1_000_000 : 2_000_000)
            try one.add(record)
            try (index % 2 == 0 ? even : odd).add(record)
        }
        try HistoryIndex.sync(even)  // an index that the copy into `merged` must not confuse
        for source in [odd, even] {
            for id in try source.recordIDs() {
                try FileManager.default.copyItem(
                    atPath: "\(source.path)/records/\(id).json", toPath: "\(merged.path)/records/\(id).json")
            }
        }
        let expected = try HistoryIndex.table(one)
        #expect(try HistoryIndex.table(merged) == expected)
        #expect(expected.runs.map(\.provenance.commit) == (0..<8).map { String(format: "%040x", $0 + 1) })
        let report = HistoryReport.markdown(HistoryAnalysis(expected))
        #expect(report.contains("`\(String(format: "%040x", 5).prefix(10))`"), "the fifth commit stepped")
        #expect(HistoryReport.markdown(HistoryAnalysis(try HistoryIndex.table(merged))) == report)
    }

    @Test func theIndexIsRebuiltWhenStaleOrDamaged() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let store = try fixture.store()
        let ids = try (0..<3).map { try store.add(StoreFixture.record($0, net: 1_000_000)).id }
        #expect(try HistoryIndex.sync(store) == HistoryIndex.Sync(added: 3, rebuilt: true))
        #expect(try HistoryIndex.sync(store) == HistoryIndex.Sync(added: 0, rebuilt: false))
        try store.add(StoreFixture.record(3, net: 1_000_000))
        #expect(try HistoryIndex.sync(store) == HistoryIndex.Sync(added: 1, rebuilt: false))
        try FileManager.default.removeItem(atPath: "\(store.path)/records/\(ids[0]).json")
        #expect(try HistoryIndex.sync(store).rebuilt)
        #expect(try HistoryIndex.table(store).runs.count == 3)
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: "\(store.path)/index.sqlite"))
        #expect(try HistoryIndex.table(store).runs.count == 3)
    }

    @Test func aDamagedRecordOrAStoreOfAnotherVersionIsNamed() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let store = try fixture.store()
        let id = try store.add(StoreFixture.record(0, net: 1_000_000)).id
        let file = "\(store.path)/records/\(id).json"
        try Data("{\"schema\": \"memharness-history-record/1\", \"figures\": 3}".utf8).write(
            to: URL(fileURLWithPath: file))
        #expect {
            try HistoryIndex.sync(store)
        } throws: { error in
            guard case .damagedRecord(let named, _) = error as? HistoryError else { return false }
            return named == file && (error as? HistoryError)?.exitStatus == .usage
        }
        try Data("{\"format\": \"memharness-history/9\"}".utf8).write(
            to: URL(fileURLWithPath: "\(store.path)/store.json"))
        #expect {
            try HistoryStore(path: store.path, create: false)
        } throws: { error in
            guard case .otherVersion(let named, let found, _) = error as? HistoryError else { return false }
            return named.hasSuffix("store.json") && found == "memharness-history/9"
        }
    }

    @Test func theGateFailsOnlyWhenTheNewestRunStepsUpAGatedFigure() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let store = try fixture.store()
        for index in 0..<8 { try store.add(StoreFixture.record(index, net: 1_000_000 + index % 2)) }
        let steady = HistoryGateVerdict(HistoryAnalysis(try HistoryIndex.table(store)))
        #expect(!steady.failed && steady.checkedSeries > 0)
        try store.add(StoreFixture.record(8, net: 1_500_000))
        let analysis = HistoryAnalysis(try HistoryIndex.table(store))
        let verdict = HistoryGateVerdict(analysis)
        let finding = try #require(verdict.findings.first { $0.key.strategy == "signal" })
        #expect(finding.key.figure == "peakAllocated" && finding.change.runsBefore == 8)
        #expect(HistoryText.gate(verdict, analysis: analysis).contains("against 8 earlier runs"))
    }
}
