import HarnessModel

/// Peak allocated by strategy: horizontal bars at the median over repetitions, whiskers from min to max.
public enum PeakBarChart {
    public static func render(_ run: ScenarioRun, scale requested: ValueScale? = nil, width: Double = 900) -> String? {
        let summary = ScenarioSummary(run)
        guard !summary.ranked.isEmpty else { return nil }
        let rowHeight = 30.0
        let top = 58.0
        let bottom = 40.0
        let nameWidth = min(
            max(summary.ranked.map { SVGDocument.textWidth($0.strategy, size: 12) }.max() ?? 0, 60) + 16, 280)
        let left = nameWidth
        let right = 110.0
        let rows = summary.ranked.count + summary.failedStrategies.count
        let height = top + bottom + rowHeight * Double(rows)
        let maxValue = max(summary.ranked.map(\.maxPeakAllocatedNetBytes).max() ?? 1, 1)
        let positives = summary.ranked.map(\.medianPeakAllocatedNetBytes).filter { $0 > 0 }
        let spread = (positives.max() ?? 1) / max(positives.min() ?? 1, 1)
        let scale = requested ?? (spread > 30 ? .log : .linear)
        let axis = ValueAxis(
            maximum: maxValue * 1.05, minimumPositive: max((positives.min() ?? 1024) / 4, 1024),
            scale: scale == .log ? .log : .linear, isBytes: true)
        let plotWidth = width - left - right
        func x(_ value: Double) -> Double { left + axis.fraction(value) * plotWidth }

        var svg = SVGDocument(width: width, height: height)
        svg.text("\(run.name): peak allocated by strategy", x: 12, y: 22, size: 15, weight: "bold")
        svg.text(
            "median of \(RepetitionsSection.count(run)), whiskers min–max · \(scale == .log ? "log scale" : "linear scale")",
            x: 12, y: 40, size: 11, fill: "#555555")
        let plotBottom = top + rowHeight * Double(rows)
        for tick in axis.ticks {
            svg.line(x1: x(tick), y1: top - 4, x2: x(tick), y2: plotBottom, stroke: "#e3e3e3", width: 0.8)
            svg.text(axis.label(tick), x: x(tick), y: plotBottom + 17, size: 11, anchor: .middle, fill: "#444444")
        }
        svg.text(
            "allocated above baseline", x: left + plotWidth / 2, y: height - 6, size: 11, anchor: .middle,
            fill: "#444444")
        for (row, strategy) in summary.ranked.enumerated() {
            let centre = top + rowHeight * (Double(row) + 0.5)
            let colour = Palette.colour(run.strategies.firstIndex(of: strategy.strategy) ?? row)
            svg.text(strategy.strategy, x: left - 10, y: centre + 4, size: 12, anchor: .end)
            svg.rect(
                x: left, y: centre - 9, width: x(strategy.medianPeakAllocatedNetBytes) - left, height: 18, fill: colour,
                opacity: 0.85)
            let low = x(strategy.minPeakAllocatedNetBytes)
            let high = x(strategy.maxPeakAllocatedNetBytes)
            if high - low > 0.5 {
                svg.line(x1: low, y1: centre, x2: high, y2: centre, stroke: "#222222", width: 1.2)
                svg.line(x1: low, y1: centre - 5, x2: low, y2: centre + 5, stroke: "#222222", width: 1.2)
                svg.line(x1: high, y1: centre - 5, x2: high, y2: centre + 5, stroke: "#222222", width: 1.2)
            }
            let ratio = summary.ratioToBest(strategy).map { " · " + Units.fixed($0, decimals: 1) + "x" } ?? ""
            svg.text(
                ValueAxis.compactBytes(Double(Int(strategy.medianPeakAllocatedNetBytes / 1024 * 10)) / 10 * 1024)
                    + ratio,
                x: max(x(strategy.maxPeakAllocatedNetBytes), x(strategy.medianPeakAllocatedNetBytes)) + 6,
                y: centre + 4, size: 11)
        }
        // Strategies without a completed case (crashed, timed out, killed by the memory limit) get a row saying so.
        for (offset, strategy) in summary.failedStrategies.enumerated() {
            let centre = top + rowHeight * (Double(summary.ranked.count + offset) + 0.5)
            let statuses = run.cases.filter { $0.strategy == strategy }.map(\.status.rawValue).uniqued().joined(
                separator: ", ")
            svg.text(strategy, x: left - 10, y: centre + 4, size: 12, anchor: .end)
            svg.text("no completed case (\(statuses))", x: left + 6, y: centre + 4, size: 11, fill: "#8a1c1c")
        }
        svg.line(x1: left, y1: top - 4, x2: left, y2: plotBottom, stroke: "#444444")
        let description =
            "Bar chart of median peak allocated above baseline per strategy of scenario \(run.name), lowest first: "
            + summary.ranked.map { "\($0.strategy) \(Units.formatBytes($0.medianPeakAllocatedNetBytes))" }.joined(
                separator: ", ") + "."
        return svg.render(title: "\(run.name): peak allocated by strategy", description: description)
    }
}
