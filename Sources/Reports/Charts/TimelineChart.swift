import HarnessModel

/// Memory over time for one scenario: one line per strategy (its median-peak repetition), phase
/// bands with labels, and each line's peak marked with its value.
public enum TimelineChart {
    /// Renders allocated bytes above baseline over time; `scale` nil picks log when peaks differ by more than 30x.
    public static func render(
        _ run: ScenarioRun, scale requested: ValueScale? = nil, width: Double = 900, plotHeight: Double = 320
    ) -> String? {
        let strategies = run.strategies.compactMap { strategy in
            representativeCase(run, strategy: strategy).map { (strategy, $0) }
        }
        guard !strategies.isEmpty else { return nil }
        struct Line {
            let name: String
            let colour: String
            let points: [(Double, Double)]
            let peak: (Double, Double)
            let killed: Bool
        }
        var lines: [Line] = []
        var maxTime = 0.0
        var maxValue = 1.0
        var minPositive = Double.greatestFiniteMagnitude
        for (index, (strategy, result)) in strategies.enumerated() {
            let series = result.samples
            guard series.count > 0 else { continue }
            let times = series.timeNanoseconds.map { Double($0) / 1e9 }
            let values = series.allocatedBytes.map { Double($0 - result.measurements.baselineAllocatedBytes) }
            let points = minMaxDownsample(times: times, values: values, buckets: 450)
            guard let peakIndex = values.indices.max(by: { values[$0] < values[$1] }) else { continue }
            lines.append(
                Line(
                    name: strategy, colour: Palette.colour(run.strategies.firstIndex(of: strategy) ?? index),
                    points: points, peak: (times[peakIndex], values[peakIndex]),
                    killed: result.killed))
            maxTime = max(maxTime, times.last ?? 0)
            maxValue = max(maxValue, values[peakIndex])
            if values[peakIndex] > 0 { minPositive = min(minPositive, values[peakIndex]) }
        }
        guard !lines.isEmpty else { return nil }
        let peaks = lines.map(\.peak.1).filter { $0 > 0 }
        let spread = (peaks.max() ?? 1) / max(peaks.min() ?? 1, 1)
        let scale = requested ?? (spread > 30 ? .log : .linear)
        let axis = ValueAxis(
            maximum: maxValue * 1.08, minimumPositive: max(minPositive / 8, 1024),
            scale: scale == .log ? .log : .linear, isBytes: true)

        // Legend rows first: the plot starts below them.
        let left = 78.0
        let right = 24.0
        let bottom = 52.0
        var legend: [(line: Line, label: String, x: Double, y: Double)] = []
        var legendX = left
        var legendY = 60.0
        for line in lines {
            let label =
                "\(line.name) (\(line.killed ? "killed by the memory limit at" : "peak") \(ValueAxis.compactBytes(line.peak.1.rounded())))"
            let itemWidth = 22 + SVGDocument.textWidth(label, size: 11) + 16
            if legendX + itemWidth > width - right && legendX > left {
                legendX = left
                legendY += 16
            }
            legend.append((line, label, legendX, legendY))
            legendX += itemWidth
        }
        let top = legendY + 18
        let plotWidth = width - left - right
        let height = top + plotHeight + bottom
        func x(_ seconds: Double) -> Double { left + (maxTime > 0 ? seconds / maxTime : 0) * plotWidth }
        func y(_ bytes: Double) -> Double { top + (1 - axis.fraction(bytes)) * plotHeight }

        var svg = SVGDocument(width: width, height: height)
        svg.text("\(run.name): allocated above baseline over time", x: left, y: 22, size: 15, weight: "bold")
        let reference = strategies.map(\.1).max(by: {
            $0.measurements.durationNanoseconds < $1.measurements.durationNanoseconds
        })
        svg.text(
            "median-peak repetition of each strategy · phases of \(reference?.strategy ?? "–") · \(scale == .log ? "log scale" : "linear scale")",
            x: left, y: 40, size: 11, fill: "#555555")

        // Phase bands of the longest-running representative case (the script is the same for all).
        if let reference {
            for (index, phase) in reference.measurements.phases.enumerated() {
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

        // Axes and grid.
        for tick in axis.ticks {
            let position = y(tick)
            svg.line(x1: left, y1: position, x2: left + plotWidth, y2: position, stroke: "#e3e3e3", width: 0.8)
            svg.text(axis.label(tick), x: left - 8, y: position + 4, size: 11, anchor: .end, fill: "#444444")
        }
        for tick in timeTicks(maximumSeconds: maxTime) {
            let position = x(tick)
            svg.line(x1: position, y1: top + plotHeight, x2: position, y2: top + plotHeight + 5, stroke: "#444444")
            svg.text(
                secondsLabel(tick), x: position, y: top + plotHeight + 19, size: 11, anchor: .middle, fill: "#444444")
        }
        svg.line(x1: left, y1: top + plotHeight, x2: left + plotWidth, y2: top + plotHeight, stroke: "#444444")
        svg.line(x1: left, y1: top, x2: left, y2: top + plotHeight, stroke: "#444444")
        svg.text(
            "time since case start", x: left + plotWidth / 2, y: height - 10, size: 11, anchor: .middle, fill: "#444444"
        )
        svg.text(
            "allocated above baseline", x: 16, y: top + plotHeight / 2, size: 11, anchor: .middle, fill: "#444444",
            rotate: -90)

        for item in legend {
            svg.line(x1: item.x, y1: item.y - 4, x2: item.x + 16, y2: item.y - 4, stroke: item.line.colour, width: 3)
            svg.text(item.label, x: item.x + 22, y: item.y, size: 11)
        }

        for line in lines {
            svg.polyline(line.points.map { (x($0.0), y($0.1)) }, stroke: line.colour, width: 1.8, label: line.name)
        }

        // Peak markers; labels pushed apart vertically so they never overlap.
        var placed: [(x: Double, y: Double, width: Double)] = []
        for line in lines.sorted(by: { $0.peak.1 > $1.peak.1 }) {
            let px = x(line.peak.0)
            let py = y(line.peak.1)
            svg.circle(x: px, y: py, radius: 4, fill: line.colour)
            let label = ValueAxis.compactBytes(Double(Int(line.peak.1 / 1024 * 10)) / 10 * 1024)
            let labelWidth = SVGDocument.textWidth(label, size: 11)
            var labelX = px + 7
            var anchor = SVGDocument.Anchor.start
            if labelX + labelWidth > left + plotWidth {
                labelX = px - 7
                anchor = .end
            }
            var labelY = max(py - 6, top + 26)
            let spanStart = anchor == .start ? labelX : labelX - labelWidth
            func collides(_ y: Double) -> Bool {
                placed.contains { abs($0.y - y) < 13 && spanStart < $0.x + $0.width && $0.x < spanStart + labelWidth }
            }
            // Move up while there is room above the plot's top, else down.
            while collides(labelY) && labelY - 13 >= top + 26 { labelY -= 13 }
            while collides(labelY) { labelY += 13 }
            placed.append((spanStart, labelY, labelWidth))
            svg.text(
                label, x: labelX, y: labelY, size: 11, anchor: anchor, fill: line.colour, weight: "bold", halo: true)
        }

        let description =
            "Line chart of allocated bytes above baseline over time for \(lines.count) strategies of scenario \(run.name). "
            + lines.map {
                "\($0.name) peaks at \(Units.formatBytes($0.peak.1)) at \(Units.fixed($0.peak.0, decimals: 2)) s"
            }.joined(separator: "; ") + "."
        return svg.render(title: "\(run.name): allocated above baseline over time", description: description)
    }
}
