import HarnessModel

/// The scenario's ranking figure by strategy (peak allocated unless the scenario ranks by another):
/// horizontal bars at the median over repetitions, whiskers from min to max, best first.
public enum PeakBarChart {
    public static func render(_ run: ScenarioRun, scale requested: ValueScale? = nil, width: Double = 900) -> String? {
        ChartBuilder.peaks(run, scale: requested).map { render($0, width: width) }
    }

    /// Draws `figure`: a row per item, its bar, whiskers and label, or its note.
    static func render(_ figure: BarFigure, width: Double = 900) -> String {
        var chart = Layout(figure, width: width)
        chart.drawHeading()
        chart.drawValueAxis()
        for (row, item) in figure.rows.enumerated() {
            if let note = item.note {
                chart.drawFailedRow(item.name, row: row, note: note)
            } else {
                chart.drawBar(item, row: row)
            }
        }
        chart.drawAxisLine()
        return chart.svg.render(title: figure.title, description: figure.description)
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
        let axis: ValueAxis
        let figure: BarFigure
        var svg: SVGDocument

        init(_ figure: BarFigure, width: Double) {
            // Every row's name, the failed strategies' too; 24 px of room, as the estimate runs short for wide glyphs.
            let nameWidth = min(
                max(figure.rows.map { SVGDocument.textWidth($0.name, size: 12) }.max() ?? 0, 60) + 24, 288)
            left = nameWidth
            let rows = figure.rows.count
            height = Self.top + Self.bottom + Self.rowHeight * Double(rows)
            self.figure = figure
            let isBytes = figure.isBytes
            let ranked = figure.rows.filter { $0.note == nil }
            let maxValue = max(ranked.compactMap(\.maximum).max() ?? 1, isBytes ? 1 : 0.001)
            let positives = ranked.compactMap(\.value).filter { $0 > 0 }
            let floor = isBytes ? 1024.0 : 0.001
            axis = ValueAxis(
                maximum: maxValue * 1.05, minimumPositive: max((positives.min() ?? floor) / 4, floor),
                scale: figure.scale == .log ? .log : .linear, isBytes: isBytes)
            plotWidth = width - left - Self.right
            plotBottom = Self.top + Self.rowHeight * Double(rows)
            svg = SVGDocument(width: width, height: height)
        }

        func x(_ value: Double) -> Double { left + axis.fraction(value) * plotWidth }

        /// The vertical centre of a row.
        func rowCentre(_ row: Int) -> Double { Self.top + Self.rowHeight * (Double(row) + 0.5) }

        mutating func drawHeading() {
            svg.text(figure.title, x: 12, y: 22, size: 15, weight: "bold")
            svg.text(figure.subtitle, x: 12, y: 40, size: 11, fill: "#555555")
        }

        /// Grid lines, tick labels under the rows, and the axis title.
        mutating func drawValueAxis() {
            for tick in axis.ticks {
                svg.line(x1: x(tick), y1: Self.top - 4, x2: x(tick), y2: plotBottom, stroke: "#e3e3e3", width: 0.8)
                svg.text(axis.label(tick), x: x(tick), y: plotBottom + 17, size: 11, anchor: .middle, fill: "#444444")
            }
            svg.text(
                figure.axisTitle, x: left + plotWidth / 2, y: height - 6, size: 11, anchor: .middle, fill: "#444444")
        }

        /// The item's name, its median bar, min–max whiskers where they show, and its label.
        mutating func drawBar(_ item: BarFigure.Row, row: Int) {
            let centre = rowCentre(row)
            svg.text(item.name, x: left - 10, y: centre + 4, size: 12, anchor: .end)
            let median = item.value ?? 0
            svg.rect(
                x: left, y: centre - 9, width: max(x(median) - left, 0), height: 18, fill: item.colour, opacity: 0.85)
            let low = x(item.minimum ?? median)
            let high = x(item.maximum ?? median)
            if high - low > 0.5 {
                svg.line(x1: low, y1: centre, x2: high, y2: centre, stroke: "#222222", width: 1.2)
                svg.line(x1: low, y1: centre - 5, x2: low, y2: centre + 5, stroke: "#222222", width: 1.2)
                svg.line(x1: high, y1: centre - 5, x2: high, y2: centre + 5, stroke: "#222222", width: 1.2)
            }
            svg.text(item.label, x: max(high, x(median)) + 6, y: centre + 4, size: 11)
        }

        /// The line the bars start from; drawn last, so it lies over their left ends.
        mutating func drawAxisLine() {
            svg.line(x1: left, y1: Self.top - 4, x2: left, y2: plotBottom, stroke: "#444444")
        }

        mutating func drawFailedRow(_ name: String, row: Int, note: String) {
            let centre = rowCentre(row)
            svg.text(name, x: left - 10, y: centre + 4, size: 12, anchor: .end)
            svg.text(note, x: left + 6, y: centre + 4, size: 11, fill: "#8a1c1c")
        }
    }
}
