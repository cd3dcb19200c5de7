import FileIO
import HarnessModel
import Testing

@testable import Reports

/// A scenario ranked by its own figure: the table, the chart and the reading follow it; peak heap stays beside.
@Suite struct RankingFigureTests {
    /// The fixture's run, ranked by a metric whose order is the reverse of the peaks' order.
    static var rankedByMetric: ScenarioRun {
        var run = ReportFixture.report.scenarios[0]
        run.cases = run.cases.map { result in
            result.changingMeasurements { draft in
                // unbounded-dispatch has the larger peak and the smaller file: the ranking must follow the file.
                let file = result.strategy == "unbounded-dispatch" ? 5 << 20 : 25 << 20
                draft.metrics.append(Metric(name: "finalDatabaseBytes", value: Double(file), unit: .bytes))
            }
        }
        run.ranking = .metric("finalDatabaseBytes")
        return run
    }

    /// The scenario's section of report.md, without charts, as lines.
    static func lines(_ run: ScenarioRun) -> [String] {
        MarkdownRenderer.render([.section(ReportBuilder.section(for: run, index: 0, files: [], scale: nil))])
            .components(separatedBy: "\n")
    }

    @Test func theTableLeadsWithTheRankingFigureAndKeepsThePeakBeside() {
        let lines = Self.lines(Self.rankedByMetric)
        let text = lines.joined(separator: "\n")
        #expect(text.contains("Ranked by `finalDatabaseBytes`, median over repetitions; lower is better."))
        let header = lines.first { $0.hasPrefix("| Rank |") } ?? ""
        #expect(
            header.hasPrefix(
                "| Rank | Strategy | `finalDatabaseBytes` | × best | Spread | Min – max | Peak allocated |"))
        let rows = lines.filter { $0.hasPrefix("| 1 |") || $0.hasPrefix("| 2 |") }
        #expect(rows.count == 2)
        #expect(rows.first?.contains("`unbounded-dispatch` | 5.00 MiB | 1.00x") == true)
        #expect(rows.last?.contains("`signal-next` | 25.00 MiB | 5.00x") == true)
        #expect(
            text.contains("**Reading:** `signal-next` has 5.0x the `finalDatabaseBytes` of `unbounded-dispatch`"))
    }

    @Test func thePeakRankingKeepsItsOwnShape() {
        let lines = Self.lines(ReportFixture.report.scenarios[0])
        let header = lines.first { $0.hasPrefix("| Rank |") } ?? ""
        #expect(header.hasPrefix("| Rank | Strategy | Peak allocated | × best | Spread | Min – max | Peak resident |"))
    }

    @Test func theBarChartDrawsTheRankingFigure() throws {
        let svg = try #require(PeakBarChart.render(Self.rankedByMetric))
        #expect(svg.contains("<title id=\"title\">live-query: finalDatabaseBytes by strategy</title>"))
        #expect(svg.contains("unbounded-dispatch 5.00 MiB, signal-next 25.00 MiB"))
    }

    @Test func aRatePhaseGivesGrowthPerSecondForEveryStrategyKilledOnesIncluded() throws {
        var run = ReportFixture.report.scenarios[0]
        run.ratePhase = "burst"
        // A case stopped by the memory limit still grew; its samples give its rate.
        let killed = CaseResult.draft(
            scenario: "live-query", workload: "live-query", strategy: "deliver-on", repetition: 2,
            status: .killedByMemoryLimit
        ) { draft in
            ReportFixture.draftFigures(&draft, repetition: 2, peak: 300_000_000)
        }
        run.cases.append(killed)
        let summary = ScenarioSummary(run)
        // The fixture's burst rows rise by peak/4, 3·peak/4, peak at 1, 2, 3 ms: slope 0.375·peak per ms.
        let unbounded = try #require(summary.growth(of: "unbounded-dispatch"))
        #expect(abs(unbounded.bytesPerSecond - 0.375 * 146_000_000 * 1000) < 1)
        let deliverOn = try #require(summary.growth(of: "deliver-on"))
        #expect(abs(deliverOn.bytesPerSecond - 0.375 * 300_000_000 * 1000) < 1)
        #expect(summary.failedStrategies == ["deliver-on"])
        let reading = try #require(summary.rateReading)
        #expect(reading.hasPrefix("While `burst` runs, `deliver-on` grows 104.77 GiB/s (`signal-next`: "))
        let lines = Self.lines(run)
        #expect(lines.contains { $0.hasPrefix("| – | `deliver-on` |") && $0.contains("104.77 GiB/s") })
    }

    @Test func withoutARatePhaseThereIsNoRate() {
        let summary = ScenarioSummary(ReportFixture.report.scenarios[0])
        #expect(summary.growth.isEmpty)
        #expect(summary.rateReading == nil)
    }
}
