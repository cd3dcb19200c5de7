import HarnessModel
import Testing

@testable import Reports

/// Time per phase: each cell is the median of the phase's durations over the strategy's completed cases.
@Suite struct PhaseTimeSectionTests {
    /// The fixture's run with `burst` lasting 3 ms in repetition 1 and 3 + `extra` ms in repetition 2.
    static func run(burstExtraMilliseconds extra: Int64) -> ScenarioRun {
        var run = ReportFixture.report.scenarios[0]
        run.cases = run.cases.map { result in
            result.changingMeasurements { draft in
                draft.phases = draft.phases.map { phase in
                    var phase = phase
                    if phase.name == "burst" {
                        phase.endNanoseconds += Int64(result.repetition - 1) * extra * 1_000_000
                    }
                    return phase
                }
            }
        }
        return run
    }

    @Test func eachCellIsTheMedianOverTheCompletedCases() throws {
        // The probe: the fixture's phases are what the table reads (3 ms of burst in every case).
        let plain = try #require(PhaseTimeSection.section(for: Self.run(burstExtraMilliseconds: 0)))
        guard case .table(let unchanged) = try #require(plain.blocks.first) else {
            Issue.record("the section holds no table")
            return
        }
        #expect(
            unchanged.rows.first.map { $0.map(\.plainText) } == ["unbounded-dispatch", "1.00 ms", "3.00 ms", "2.00 ms"])
        let section = try #require(PhaseTimeSection.section(for: Self.run(burstExtraMilliseconds: 4)))
        guard case .table(let table) = try #require(section.blocks.first) else {
            Issue.record("the section holds no table")
            return
        }
        #expect(table.columns.map(\.header.plainText) == ["Strategy", "setup", "burst", "teardown"])
        // 3 ms and 7 ms: the median of two is their mean; the crashed strategy has no completed case and no row.
        #expect(
            table.rows.map { $0.map(\.plainText) } == [
                ["unbounded-dispatch", "1.00 ms", "5.00 ms", "2.00 ms"],
                ["signal-next", "1.00 ms", "5.00 ms", "2.00 ms"],
            ])
    }

    @Test func strategiesWithStepsOfTheirOwnEachHaveTheirPhasesColumns() throws {
        // As the servers of a scenario: signal-next's `burst` is named `uploads`; both tables have every phase once.
        var run = Self.run(burstExtraMilliseconds: 0)
        run.cases = run.cases.map { result in
            guard result.strategy == "signal-next" else { return result }
            return result.changingMeasurements { draft in
                draft.phases = draft.phases.map { phase in
                    var phase = phase
                    if phase.name == "burst" { phase.name = "uploads" }
                    return phase
                }
            }
        }
        let section = try #require(PhaseTimeSection.section(for: run))
        guard case .table(let table) = try #require(section.blocks.first) else {
            Issue.record("the section holds no table")
            return
        }
        #expect(table.columns.map(\.header.plainText) == ["Strategy", "setup", "burst", "teardown", "uploads"])
        #expect(
            table.rows.map { $0.map(\.plainText) } == [
                ["unbounded-dispatch", "1.00 ms", "3.00 ms", "2.00 ms", "–"],
                ["signal-next", "1.00 ms", "–", "2.00 ms", "3.00 ms"],
            ])
        let summary = ScenarioSummary(run)
        let peaks = try #require(ReportBuilder.phaseTable("Peaks", summary.ranked, \.phasePeakNetBytes))
        guard case .table(let peakTable) = try #require(peaks.blocks.first) else {
            Issue.record("the section holds no table")
            return
        }
        // Its columns follow the ranking (the first-ranked strategy's phases first).
        let headers = peakTable.columns.dropFirst().map(\.header.plainText)
        #expect(headers.count == 4 && Set(headers) == ["setup", "burst", "teardown", "uploads"], "\(headers)")
    }

    @Test func aRunWithoutCompletedCasesHasNoSection() {
        var run = ReportFixture.report.scenarios[0]
        run.cases = run.cases.filter { $0.status != .ok }
        #expect(PhaseTimeSection.section(for: run) == nil)
    }
}
