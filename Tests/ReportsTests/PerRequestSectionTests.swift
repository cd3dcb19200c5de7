import HarnessModel
import TestSupport
import Testing

@testable import Reports

/// Per request: a server's load steps, read back from their metrics by phase, in a table of their own; the scenario's
/// metrics table leaves them out.
@Suite struct PerRequestSectionTests {
    /// The fixture's run with every completed case reporting a `load` step and an `uploads` step's per-request figures.
    static func run() -> ScenarioRun {
        var run = ReportFixture.report.scenarios[0]
        run.cases = run.cases.map { result in
            result.changingMeasurements { draft in
                let figures = { (phase: String, allocations: Double) -> [Metric] in
                    [
                        Metric(
                            name: LoadFigures.metricName("requests", phase: phase), value: 3000, unit: .count),
                        Metric(
                            name: LoadFigures.metricName("allocationsPerRequest", phase: phase), value: allocations,
                            unit: .count),
                        Metric(
                            name: LoadFigures.metricName("liveGrowthPer1000Requests", phase: phase),
                            value: 4_128_000, unit: .bytes),
                        Metric(
                            name: LoadFigures.metricName("liveGrowthPer1000RequestsLow", phase: phase),
                            value: 4_100_000, unit: .bytes),
                        Metric(
                            name: LoadFigures.metricName("liveGrowthPer1000RequestsHigh", phase: phase),
                            value: 4_150_000, unit: .bytes),
                    ]
                }
                // One measured round of uploads: a growth without an interval.
                draft.metrics +=
                    figures("load", 2)
                    + figures("uploads", 130).filter { !$0.name.hasSuffix("Low") && !$0.name.hasSuffix("High") }
                    + [Metric(name: "uploadsAllocations", value: 10_000, unit: .count)]
            }
        }
        return run
    }

    @Test func eachLoadStepIsARowAndTheMetricsTableKeepsTheRest() throws {
        let summary = ScenarioSummary(Self.run())
        let section = try #require(PerRequestSection.section(summary))
        guard case .table(let table) = try #require(section.blocks.last) else {
            Issue.record("the section holds no table")
            return
        }
        let rows = table.rows.map { $0.map(\.plainText) }
        let first = try #require(rows.first)
        #expect(Array(first.prefix(4)) == [summary.ranked[0].strategy, "load", "3000", "2"])
        #expect(first[5] == "3.94 MiB (95%: 3.91 MiB to 3.96 MiB)")
        #expect(rows.contains { $0[1] == "uploads" && $0[3] == "130" && $0[5] == "3.94 MiB (one round: no interval)" })
        // The generic table keeps what no section of its own shows, and nothing this one does.
        let metrics = try #require(ReportBuilder.metricsTable(summary))
        guard case .table(let generic) = try #require(metrics.blocks.first) else {
            Issue.record("the metrics section holds no table")
            return
        }
        let headers = generic.columns.map(\.header.plainText)
        #expect(headers.contains("uploadsAllocations"))
        #expect(!headers.contains { $0.contains("PerRequest") || $0.hasPrefix("requests") })
        // Without load steps there is no section.
        #expect(PerRequestSection.section(ScenarioSummary(ReportFixture.report.scenarios[0])) == nil)
    }
}
