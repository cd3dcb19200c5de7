import HarnessModel

/// A scenario's gauges over time, one small panel per gauge, one line per strategy.
public enum GaugeChart {
    public static func render(_ run: ScenarioRun, width: Double = 900) -> String? {
        let strategies = run.strategies.compactMap { strategy in
            representativeCase(run, strategy: strategy).map { (strategy, $0) }
        }
        let gaugeNames = strategies.flatMap { $0.1.samples.gaugeNames }.uniqued()
        guard !gaugeNames.isEmpty else { return nil }
        let panelHeight = 150.0
        let gap = 34.0
        let top = 58.0
        let left = 78.0
        let right = 24.0
        let height = top + Double(gaugeNames.count) * (panelHeight + gap) + 12
        let plotWidth = width - left - right
        let maxTime = strategies.compactMap { $0.1.samples.timeNanoseconds.last }.map { Double($0) / 1e9 }.max() ?? 1

        var svg = SVGDocument(width: width, height: height)
        svg.text("\(run.name): gauges over time", x: left, y: 22, size: 15, weight: "bold")
        var legendX = left
        for (strategy, _) in strategies {
            let colour = Palette.colour(run.strategies.firstIndex(of: strategy) ?? 0)
            svg.line(x1: legendX, y1: 40, x2: legendX + 16, y2: 40, stroke: colour, width: 3)
            svg.text(strategy, x: legendX + 22, y: 44, size: 11)
            legendX += 22 + SVGDocument.textWidth(strategy, size: 11) + 16
        }
        for (panel, gauge) in gaugeNames.enumerated() {
            let panelTop = top + Double(panel) * (panelHeight + gap) + 16
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
            let isBytes = gauge.hasSuffix("Bytes")
            // Gauges are whole numbers: no fractional ticks on a 0-or-1 gauge.
            let axis = ValueAxis(
                maximum: maxValue * 1.05, minimumPositive: 1, scale: .linear, isBytes: isBytes, integer: true)
            func x(_ seconds: Double) -> Double { left + (maxTime > 0 ? seconds / maxTime : 0) * plotWidth }
            func y(_ value: Double) -> Double { panelTop + (1 - axis.fraction(value)) * panelHeight }
            svg.text(gauge, x: left, y: panelTop - 6, size: 12, weight: "bold")
            for tick in axis.ticks {
                svg.line(x1: left, y1: y(tick), x2: left + plotWidth, y2: y(tick), stroke: "#e3e3e3", width: 0.8)
                svg.text(axis.label(tick), x: left - 8, y: y(tick) + 4, size: 10, anchor: .end, fill: "#444444")
            }
            for tick in timeTicks(maximumSeconds: maxTime) {
                svg.text(
                    secondsLabel(tick), x: x(tick), y: panelTop + panelHeight + 14, size: 10, anchor: .middle,
                    fill: "#444444")
            }
            svg.line(
                x1: left, y1: panelTop + panelHeight, x2: left + plotWidth, y2: panelTop + panelHeight,
                stroke: "#444444")
            for (strategy, points) in lines {
                svg.polyline(
                    points.map { (x($0.0), y($0.1)) },
                    stroke: Palette.colour(run.strategies.firstIndex(of: strategy) ?? 0),
                    width: 1.5, label: "\(strategy): \(gauge)")
            }
        }
        let description =
            "Small multiples of the gauges " + gaugeNames.joined(separator: ", ")
            + " over time for the strategies of scenario \(run.name)."
        return svg.render(title: "\(run.name): gauges over time", description: description)
    }
}
