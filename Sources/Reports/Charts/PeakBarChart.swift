import HarnessModel

/// The scenario's ranking figure by strategy (peak allocated unless the scenario ranks by another):
/// horizontal bars at the median over repetitions, whiskers from min to max, best first.
public enum PeakBarChart {
    public static func render(_ run: ScenarioRun, scale requested: ValueScale? = nil, width: Double = 900) -> String? {
        let summary = ScenarioSummary(run)
        guard !summary.ranked.isEmpty else { return nil }
        var chart = Layout(summary, scale: requested, width: width)
        let title = "\(run.name): \(summary.rankingTitle) by strategy"
        chart.drawHeading(run, title: title)
        chart.drawValueAxis()
        for (row, strategy) in summary.ranked.enumerated() {
            let colour = Palette.colour(run.strategies.firstIndex(of: strategy.strategy) ?? row)
            chart.drawBar(strategy, row: row, colour: colour, ratio: summary.ratioToBest(strategy))
        }
        // Strategies without a completed case (crashed, timed out, killed by the memory limit) get a row saying so.
        for (offset, strategy) in summary.failedStrategies.enumerated() {
            let statuses = run.cases.filter { $0.strategy == strategy }.map(\.status.rawValue).uniqued().joined(
                separator: ", ")
            chart.drawFailedRow(strategy, row: summary.ranked.count + offset, statuses: statuses)
        }
        chart.drawAxisLine()
        let description =
            "Bar chart of the median \(summary.rankingTitle) per strategy of scenario \(run.name), lowest first: "
            + summary.ranked.map { "\($0.strategy) \(summary.formatRanking($0.rankingMedian ?? 0))" }.joined(
                separator: ", ") + "."
        return chart.svg.render(title: title, description: description)
    }

    /// One row per strategy under the heading, names in a left column as wide as the longest, and the document.
    private struct Layout {
        static let rowHeight = 30.0
        static let top = 58.0
        static let bottom = 40.0
        static let right = 110.0

        /// Where the bars start: right of the strategy names.
        let left: Double
        let height: Double
        let plotWidth: Double
        let plotBottom: Double
        let scale: ValueScale
        let axis: ValueAxis
        let summary: ScenarioSummary
        var svg: SVGDocument

        init(_ summary: ScenarioSummary, scale requested: ValueScale?, width: Double) {
            // Every row's name, the failed strategies' too; 24 px of room, as the estimate runs short for wide glyphs.
            let names = summary.ranked.map(\.strategy) + summary.failedStrategies
            let nameWidth = min(max(names.map { SVGDocument.textWidth($0, size: 12) }.max() ?? 0, 60) + 24, 288)
            left = nameWidth
            let rows = summary.ranked.count + summary.failedStrategies.count
            height = Self.top + Self.bottom + Self.rowHeight * Double(rows)
            self.summary = summary
            let isBytes = summary.rankingIsBytes
            let maxValue = max(summary.ranked.compactMap(\.rankingMax).max() ?? 1, isBytes ? 1 : 0.001)
            let positives = summary.ranked.compactMap(\.rankingMedian).filter { $0 > 0 }
            let spread = (positives.max() ?? 1) / max(positives.min() ?? 1, isBytes ? 1 : 0.001)
            scale = requested ?? (spread > 30 ? .log : .linear)
            let floor = isBytes ? 1024.0 : 0.001
            axis = ValueAxis(
                maximum: maxValue * 1.05, minimumPositive: max((positives.min() ?? floor) / 4, floor),
                scale: scale == .log ? .log : .linear, isBytes: isBytes)
            plotWidth = width - left - Self.right
            plotBottom = Self.top + Self.rowHeight * Double(rows)
            svg = SVGDocument(width: width, height: height)
        }

        func x(_ value: Double) -> Double { left + axis.fraction(value) * plotWidth }

        /// The vertical centre of a row.
        func rowCentre(_ row: Int) -> Double { Self.top + Self.rowHeight * (Double(row) + 0.5) }

        mutating func drawHeading(_ run: ScenarioRun, title: String) {
            svg.text(title, x: 12, y: 22, size: 15, weight: "bold")
            svg.text(
                "median of \(RepetitionsSection.count(run)), whiskers min–max · "
                    + "\(scale == .log ? "log scale" : "linear scale")",
                x: 12, y: 40, size: 11, fill: "#555555")
        }

        /// Grid lines, tick labels under the rows, and the axis title.
        mutating func drawValueAxis() {
            for tick in axis.ticks {
                svg.line(x1: x(tick), y1: Self.top - 4, x2: x(tick), y2: plotBottom, stroke: "#e3e3e3", width: 0.8)
                svg.text(axis.label(tick), x: x(tick), y: plotBottom + 17, size: 11, anchor: .middle, fill: "#444444")
            }
            svg.text(
                summary.rankingAxisTitle, x: left + plotWidth / 2, y: height - 6, size: 11, anchor: .middle,
                fill: "#444444")
        }

        /// The strategy's name, its median bar, min–max whiskers where they show, and its value and ratio to the best.
        mutating func drawBar(_ strategy: StrategySummary, row: Int, colour: String, ratio: Double?) {
            let centre = rowCentre(row)
            svg.text(strategy.strategy, x: left - 10, y: centre + 4, size: 12, anchor: .end)
            let median = strategy.rankingMedian ?? 0
            svg.rect(x: left, y: centre - 9, width: max(x(median) - left, 0), height: 18, fill: colour, opacity: 0.85)
            let low = x(strategy.rankingMin ?? median)
            let high = x(strategy.rankingMax ?? median)
            if high - low > 0.5 {
                svg.line(x1: low, y1: centre, x2: high, y2: centre, stroke: "#222222", width: 1.2)
                svg.line(x1: low, y1: centre - 5, x2: low, y2: centre + 5, stroke: "#222222", width: 1.2)
                svg.line(x1: high, y1: centre - 5, x2: high, y2: centre + 5, stroke: "#222222", width: 1.2)
            }
            let ratioText = ratio.map { " · " + Units.fixed($0, decimals: 1) + "x" } ?? ""
            let label =
                summary.rankingIsBytes
                ? ValueAxis.compactBytes(Double(Int(median / 1024 * 10)) / 10 * 1024) : summary.formatRanking(median)
            svg.text(label + ratioText, x: max(high, x(median)) + 6, y: centre + 4, size: 11)
        }

        /// The line the bars start from; drawn last, so it lies over their left ends.
        mutating func drawAxisLine() {
            svg.line(x1: left, y1: Self.top - 4, x2: left, y2: plotBottom, stroke: "#444444")
        }

        mutating func drawFailedRow(_ strategy: String, row: Int, statuses: String) {
            let centre = rowCentre(row)
            svg.text(strategy, x: left - 10, y: centre + 4, size: 12, anchor: .end)
            svg.text("no completed case (\(statuses))", x: left + 6, y: centre + 4, size: 11, fill: "#8a1c1c")
        }
    }
}
