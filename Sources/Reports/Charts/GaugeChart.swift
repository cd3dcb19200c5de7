import HarnessModel

/// A scenario's gauges over time, one small panel per gauge, one line per strategy.
public enum GaugeChart {
    public static func render(_ run: ScenarioRun, width: Double = 900) -> String? {
        ChartBuilder.gauges(run).map { render($0, width: width) }
    }

    /// Draws `figure`: its legend, then a panel per quantity.
    static func render(_ figure: PanelsFigure, width: Double = 900) -> String {
        var chart = Layout(figure: figure, width: width)
        chart.drawHeading()
        for (index, panel) in figure.panels.enumerated() { chart.drawPanel(index, panel) }
        let description =
            "Small multiples of the gauges " + figure.panels.map(\.name).joined(separator: ", ")
            + " over time for the strategies of scenario \(figure.title.dropLast(": gauges over time".count))."
        return chart.svg.render(title: figure.title, description: description)
    }

    /// Panels stacked under the heading and legend, all on one time axis, and the document.
    private struct Layout {
        static let panelHeight = 150.0
        static let gap = 34.0
        static let top = 58.0
        static let left = 78.0
        static let right = 24.0

        let figure: PanelsFigure
        let plotWidth: Double
        /// The end of the time axis, seconds: the latest last sample.
        let maxTime: Double
        var svg: SVGDocument

        init(figure: PanelsFigure, width: Double) {
            self.figure = figure
            maxTime = figure.maximumSeconds
            plotWidth = width - Self.left - Self.right
            let height = Self.top + Double(figure.panels.count) * (Self.panelHeight + Self.gap) + 12
            svg = SVGDocument(width: width, height: height)
        }

        func x(_ seconds: Double) -> Double { Self.left + (maxTime > 0 ? seconds / maxTime : 0) * plotWidth }

        /// The title and one legend item per line, side by side.
        mutating func drawHeading() {
            svg.text(figure.title, x: Self.left, y: 22, size: 15, weight: "bold")
            var legendX = Self.left
            for entry in figure.legendEntries {
                svg.line(x1: legendX, y1: 40, x2: legendX + 16, y2: 40, stroke: entry.colour, width: 3)
                svg.text(entry.name, x: legendX + 22, y: 44, size: 11)
                legendX += 22 + SVGDocument.textWidth(entry.name, size: 11) + 16
            }
        }

        /// One panel: its name, value grid, time labels, baseline and its lines, downsampled.
        mutating func drawPanel(_ index: Int, _ panel: PanelsFigure.Panel) {
            let left = Self.left
            let panelTop = Self.top + Double(index) * (Self.panelHeight + Self.gap) + 16
            // Gauges are whole numbers: no fractional ticks on a 0-or-1 gauge.
            let axis = ValueAxis(
                maximum: panel.maximum * 1.05, minimumPositive: 1, scale: .linear, isBytes: panel.isBytes,
                integer: true)
            func y(_ value: Double) -> Double { panelTop + (1 - axis.fraction(value)) * Self.panelHeight }
            svg.text(panel.name, x: left, y: panelTop - 6, size: 12, weight: "bold")
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
            for line in panel.lines {
                let points = minMaxDownsample(times: line.seconds, values: line.values, buckets: 300)
                svg.polyline(
                    points.map { (x($0.0), y($0.1)) }, stroke: line.colour, width: 1.5,
                    label: "\(line.name): \(panel.name)")
            }
        }
    }
}
