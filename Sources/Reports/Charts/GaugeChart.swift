import HarnessModel

/// A scenario's gauges over time, one small panel per gauge, one line per strategy.
public enum GaugeChart {
    public static func render(_ run: ScenarioRun, width: Double = 900) -> String? {
        let strategies = run.strategies.compactMap { strategy in
            representativeCase(run, strategy: strategy).map { (strategy, $0) }
        }
        let gaugeNames = strategies.flatMap { $0.1.samples.gaugeNames }.uniqued()
        guard !gaugeNames.isEmpty else { return nil }
        let maxTime = strategies.compactMap { $0.1.samples.timeNanoseconds.last }.map { Double($0) / 1e9 }.max() ?? 1
        var chart = Layout(run: run, panels: gaugeNames.count, width: width, maxTime: maxTime)
        chart.drawHeading(strategies.map(\.0))
        for (panel, gauge) in gaugeNames.enumerated() {
            chart.drawPanel(panel, gauge: gauge, strategies: strategies)
        }
        let description =
            "Small multiples of the gauges " + gaugeNames.joined(separator: ", ")
            + " over time for the strategies of scenario \(run.name)."
        return chart.svg.render(title: "\(run.name): gauges over time", description: description)
    }

    /// Panels stacked under the heading and legend, all on one time axis, and the document.
    private struct Layout {
        static let panelHeight = 150.0
        static let gap = 34.0
        static let top = 58.0
        static let left = 78.0
        static let right = 24.0

        let run: ScenarioRun
        let plotWidth: Double
        /// The end of the time axis, seconds: the latest last sample.
        let maxTime: Double
        var svg: SVGDocument

        init(run: ScenarioRun, panels: Int, width: Double, maxTime: Double) {
            self.run = run
            self.maxTime = maxTime
            plotWidth = width - Self.left - Self.right
            let height = Self.top + Double(panels) * (Self.panelHeight + Self.gap) + 12
            svg = SVGDocument(width: width, height: height)
        }

        func colour(_ strategy: String) -> String { Palette.colour(run.strategies.firstIndex(of: strategy) ?? 0) }

        func x(_ seconds: Double) -> Double { Self.left + (maxTime > 0 ? seconds / maxTime : 0) * plotWidth }

        /// The title and one legend item per strategy, side by side.
        mutating func drawHeading(_ strategies: [String]) {
            svg.text("\(run.name): gauges over time", x: Self.left, y: 22, size: 15, weight: "bold")
            var legendX = Self.left
            for strategy in strategies {
                svg.line(x1: legendX, y1: 40, x2: legendX + 16, y2: 40, stroke: colour(strategy), width: 3)
                svg.text(strategy, x: legendX + 22, y: 44, size: 11)
                legendX += 22 + SVGDocument.textWidth(strategy, size: 11) + 16
            }
        }

        /// One gauge's panel: its name, value grid, time labels, baseline and a line per strategy that has it.
        mutating func drawPanel(_ panel: Int, gauge: String, strategies: [(String, RepresentativeCase)]) {
            let left = Self.left
            let panelTop = Self.top + Double(panel) * (Self.panelHeight + Self.gap) + 16
            let (lines, maxValue) = Self.lines(of: gauge, strategies: strategies)
            // Gauges are whole numbers: no fractional ticks on a 0-or-1 gauge.
            let axis = ValueAxis(
                maximum: maxValue * 1.05, minimumPositive: 1, scale: .linear, isBytes: gauge.hasSuffix("Bytes"),
                integer: true)
            func y(_ value: Double) -> Double { panelTop + (1 - axis.fraction(value)) * Self.panelHeight }
            svg.text(gauge, x: left, y: panelTop - 6, size: 12, weight: "bold")
            for tick in axis.ticks {
                svg.line(x1: left, y1: y(tick), x2: left + plotWidth, y2: y(tick), stroke: "#e3e3e3", width: 0.8)
                svg.text(axis.label(tick), x: left - 8, y: y(tick) + 4, size: 10, anchor: .end, fill: "#444444")
            }
            for tick in timeTicks(maximumSeconds: maxTime) {
                svg.text(
                    secondsLabel(tick), x: x(tick), y: panelTop + Self.panelHeight + 14, size: 10, anchor: .middle,
                    fill: "#444444")
            }
            svg.line(
                x1: left, y1: panelTop + Self.panelHeight, x2: left + plotWidth, y2: panelTop + Self.panelHeight,
                stroke: "#444444")
            for (strategy, points) in lines {
                let scaled = points.map { (x($0.0), y($0.1)) }
                svg.polyline(scaled, stroke: colour(strategy), width: 1.5, label: "\(strategy): \(gauge)")
            }
        }

        /// Each strategy's (seconds, value) points of `gauge`, downsampled, and the largest value (at least 1).
        static func lines(of gauge: String, strategies: [(String, RepresentativeCase)]) -> (
            lines: [(String, [(Double, Double)])], maxValue: Double
        ) {
            var maxValue = 1.0
            var lines: [(String, [(Double, Double)])] = []
            for (strategy, result) in strategies {
                let series = result.samples
                guard let index = series.gaugeNames.firstIndex(of: gauge) else { continue }
                let times = series.timeNanoseconds.map { Double($0) / 1e9 }
                let values = series.gauges[index].map(Double.init)
                maxValue = max(maxValue, values.max() ?? 0)
                lines.append((strategy, minMaxDownsample(times: times, values: values, buckets: 300)))
            }
            return (lines, maxValue)
        }
    }
}
