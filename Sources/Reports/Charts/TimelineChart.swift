import HarnessModel

/// Memory over time for one scenario: one line per strategy (its median-peak repetition), phase
/// bands with labels, and each line's peak marked with its value.
public enum TimelineChart {
    /// Renders allocated bytes above baseline over time; `scale` nil picks log when peaks differ by more than 30x.
    public static func render(
        _ run: ScenarioRun, scale requested: ValueScale? = nil, width: Double = 900, plotHeight: Double = 320
    ) -> String? {
        ChartBuilder.timeline(run, scale: requested).flatMap { render($0, width: width, plotHeight: plotHeight) }
    }

    /// Draws `figure`: each series downsampled, its peak marker where the figure puts it.
    static func render(_ figure: TimelineFigure, width: Double = 900, plotHeight: Double = 320) -> String? {
        let lines = figure.series.map(line)
        guard !lines.isEmpty else { return nil }
        let axis = valueAxis(lines, scale: figure.scale)
        var chart = Layout(lines: lines, axis: axis, width: width, plotHeight: plotHeight)
        chart.drawHeading(figure.scenario, phasesOf: figure.phasesOf, scale: figure.scale)
        if figure.phasesOf != nil { chart.drawPhaseBands(figure.phases) }
        chart.drawAxes()
        chart.drawLegend()
        chart.drawLines()
        chart.drawPeakMarkers()
        return chart.svg.render(
            title: "\(figure.scenario): allocated above baseline over time",
            description: description(figure.scenario, lines))
    }

    /// An axis up to the highest peak.
    private static func valueAxis(_ lines: [Line], scale: ValueScale) -> ValueAxis {
        let peaks = lines.map(\.peak.1).filter { $0 > 0 }
        let maxValue = lines.reduce(1.0) { max($0, $1.peak.1) }
        let minPositive = peaks.reduce(Double.greatestFiniteMagnitude) { min($0, $1) }
        return ValueAxis(
            maximum: maxValue * 1.08, minimumPositive: max(minPositive / 8, 1024),
            scale: scale == .log ? .log : .linear, isBytes: true)
    }

    /// The chart in words: each strategy's peak and when it was reached.
    private static func description(_ name: String, _ lines: [Line]) -> String {
        "Line chart of allocated bytes above baseline over time for \(lines.count) strategies of scenario \(name). "
            + lines.map {
                "\($0.name) peaks at \(Units.formatBytes($0.peak.1)) at \(Units.fixed($0.peak.0, decimals: 2)) s"
            }.joined(separator: "; ") + "."
    }

    /// One strategy's line: (seconds, bytes above baseline) points and where it peaks.
    private struct Line {
        let name: String
        let colour: String
        let points: [(Double, Double)]
        let peak: (Double, Double)
        let killed: Bool
        /// Time of the last sample, seconds.
        let lastTime: Double
    }

    /// A series as drawn: downsampled, its peak marker in seconds and bytes.
    private static func line(_ series: TimelineFigure.Series) -> Line {
        let times = series.timeNanoseconds.map { Double($0) / 1e9 }
        let values = series.netBytes.map(Double.init)
        return Line(
            name: series.strategy, colour: series.colour,
            points: minMaxDownsample(times: times, values: values, buckets: 450),
            peak: (Double(series.peak.timeNanoseconds) / 1e9, Double(series.peak.netBytes)), killed: series.kill != nil,
            lastTime: times.last ?? 0)
    }

    /// Where everything goes (the legend's rows decide where the plot starts), and the document.
    private struct Layout {
        static let left = 78.0
        static let right = 24.0
        static let bottom = 52.0

        let lines: [Line]
        let axis: ValueAxis
        let maxTime: Double
        let legend: [(line: Line, label: String, x: Double, y: Double)]
        let top: Double
        let plotWidth: Double
        let plotHeight: Double
        let height: Double
        var svg: SVGDocument

        init(lines: [Line], axis: ValueAxis, width: Double, plotHeight: Double) {
            self.lines = lines
            self.axis = axis
            self.plotHeight = plotHeight
            maxTime = lines.reduce(0.0) { max($0, $1.lastTime) }
            let legend = Self.legendRows(lines, width: width)
            self.legend = legend.items
            top = legend.lastRowY + 18
            plotWidth = width - Self.left - Self.right
            height = top + plotHeight + Self.bottom
            svg = SVGDocument(width: width, height: height)
        }

        /// Legend items left to right, wrapped to a new row where the next would cross the right margin.
        static func legendRows(_ lines: [Line], width: Double) -> (
            items: [(line: Line, label: String, x: Double, y: Double)], lastRowY: Double
        ) {
            var legend: [(line: Line, label: String, x: Double, y: Double)] = []
            var legendX = left
            var legendY = 60.0
            for line in lines {
                let label =
                    "\(line.name) (\(line.killed ? "killed by the memory limit at" : "peak") "
                    + "\(ValueAxis.compactBytes(line.peak.1.rounded())))"
                let itemWidth = 22 + SVGDocument.textWidth(label, size: 11) + 16
                if legendX + itemWidth > width - right && legendX > left {
                    legendX = left
                    legendY += 16
                }
                legend.append((line, label, legendX, legendY))
                legendX += itemWidth
            }
            return (legend, legendY)
        }

        func x(_ seconds: Double) -> Double { Self.left + (maxTime > 0 ? seconds / maxTime : 0) * plotWidth }
        func y(_ bytes: Double) -> Double { top + (1 - axis.fraction(bytes)) * plotHeight }

        mutating func drawHeading(_ name: String, phasesOf reference: String?, scale: ValueScale) {
            svg.text("\(name): allocated above baseline over time", x: Self.left, y: 22, size: 15, weight: "bold")
            svg.text(
                "median-peak repetition of each strategy · phases of \(reference ?? "–") · "
                    + "\(scale == .log ? "log scale" : "linear scale")",
                x: Self.left, y: 40, size: 11, fill: "#555555")
        }

        /// Every other phase shaded, each one's start marked and its name written where it fits.
        mutating func drawPhaseBands(_ phases: [TimelineFigure.Phase]) {
            let left = Self.left
            for (index, phase) in phases.enumerated() {
                // Phases may end after the last sample; keep the bands inside the plot.
                let start = min(x(Double(phase.startNanoseconds) / 1e9), left + plotWidth)
                let end = min(x(Double(phase.endNanoseconds) / 1e9), left + plotWidth)
                guard end > start else { continue }
                if index % 2 == 1 {
                    svg.rect(x: start, y: top, width: end - start, height: plotHeight, fill: "#000000", opacity: 0.045)
                }
                svg.line(
                    x1: start, y1: top, x2: start, y2: top + plotHeight, stroke: "#bbbbbb", width: 0.6, dash: "2,3")
                let label = phase.name
                if SVGDocument.textWidth(label, size: 10) + 6 < end - start {
                    svg.text(label, x: (start + end) / 2, y: top + 12, size: 10, anchor: .middle, fill: "#666666")
                }
            }
        }

        /// Grid lines and labels of both axes, the axes, and their titles.
        mutating func drawAxes() {
            let left = Self.left
            for tick in axis.ticks {
                let position = y(tick)
                svg.line(x1: left, y1: position, x2: left + plotWidth, y2: position, stroke: "#e3e3e3", width: 0.8)
                svg.text(axis.label(tick), x: left - 8, y: position + 4, size: 11, anchor: .end, fill: "#444444")
            }
            for tick in timeTicks(maximumSeconds: maxTime) {
                let position = x(tick)
                svg.line(x1: position, y1: top + plotHeight, x2: position, y2: top + plotHeight + 5, stroke: "#444444")
                svg.text(
                    secondsLabel(tick), x: position, y: top + plotHeight + 19, size: 11, anchor: .middle,
                    fill: "#444444")
            }
            svg.line(x1: left, y1: top + plotHeight, x2: left + plotWidth, y2: top + plotHeight, stroke: "#444444")
            svg.line(x1: left, y1: top, x2: left, y2: top + plotHeight, stroke: "#444444")
            svg.text(
                "time since case start", x: left + plotWidth / 2, y: height - 10, size: 11, anchor: .middle,
                fill: "#444444")
            svg.text(
                "allocated above baseline", x: 16, y: top + plotHeight / 2, size: 11, anchor: .middle,
                fill: "#444444", rotate: -90)
        }

        mutating func drawLegend() {
            for item in legend {
                svg.line(
                    x1: item.x, y1: item.y - 4, x2: item.x + 16, y2: item.y - 4, stroke: item.line.colour, width: 3)
                svg.text(item.label, x: item.x + 22, y: item.y, size: 11)
            }
        }

        mutating func drawLines() {
            for line in lines {
                let points = line.points.map { (x($0.0), y($0.1)) }
                svg.polyline(points, stroke: line.colour, width: 1.8, label: line.name)
            }
        }

        /// Each line's peak: a dot and its value, highest first, labels pushed apart vertically so they never overlap.
        mutating func drawPeakMarkers() {
            var placed: [(x: Double, y: Double, width: Double)] = []
            for line in lines.sorted(by: { $0.peak.1 > $1.peak.1 }) {
                let px = x(line.peak.0)
                let py = y(line.peak.1)
                svg.circle(x: px, y: py, radius: 4, fill: line.colour)
                let label = ValueAxis.compactBytes(Double(Int(line.peak.1 / 1024 * 10)) / 10 * 1024)
                let labelWidth = SVGDocument.textWidth(label, size: 11)
                var labelX = px + 7
                var anchor = SVGDocument.Anchor.start
                if labelX + labelWidth > Self.left + plotWidth {
                    labelX = px - 7
                    anchor = .end
                }
                let spanStart = anchor == .start ? labelX : labelX - labelWidth
                let labelY = freeRow(from: max(py - 6, top + 26), start: spanStart, width: labelWidth, placed: placed)
                placed.append((spanStart, labelY, labelWidth))
                svg.text(
                    label, x: labelX, y: labelY, size: 11, anchor: anchor, fill: line.colour, weight: "bold",
                    halo: true)
            }
        }

        /// The height nearest `labelY`, in 13 px steps, where a label spanning `start`...`start + width`
        /// overlaps none of those placed.
        func freeRow(
            from labelY: Double, start spanStart: Double, width labelWidth: Double,
            placed: [(x: Double, y: Double, width: Double)]
        ) -> Double {
            func collides(_ y: Double) -> Bool {
                placed.contains { abs($0.y - y) < 13 && spanStart < $0.x + $0.width && $0.x < spanStart + labelWidth }
            }
            var labelY = labelY
            // Move up while there is room above the plot's top, else down.
            while collides(labelY) && labelY - 13 >= top + 26 { labelY -= 13 }
            while collides(labelY) { labelY += 13 }
            return labelY
        }
    }
}
