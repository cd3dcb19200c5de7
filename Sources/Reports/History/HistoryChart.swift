import HarnessModel
import History

/// A series over commits as SVG, in the house style of the report's charts: the values (one point per run),
/// each segment's median with its noise band (± 2.5σ shaded), the change points marked with their commit and
/// step, and a step of the newest run alone in grey (it is a change point once the runs after it stay there).
enum HistoryChart {
    static let width = 900.0
    static let height = 320.0
    static let left = 78.0
    static let right = 24.0
    static let top = 64.0
    static let bottom = 56.0
    /// Points drawn at most: a longer series is reduced to the smallest and largest value per column.
    static let maximumPoints = 800

    static func render(_ entry: AnalysedSeries, runs: [HistoryRun]) -> String {
        render(figure(entry, runs: runs), description: description(entry, runs: runs))
    }

    /// The series over commits as the figure its chart draws.
    static func figure(_ entry: AnalysedSeries, runs: [HistoryRun]) -> HistorySeriesFigure {
        let series = entry.series
        let analysis = entry.analysis
        let noise = Renderings.format(analysis.band, isBytes: series.isBytes)
        return HistorySeriesFigure(
            title:
                "\(series.key.scenario) / \(series.key.strategy): \(series.key.figure) over \(series.values.count) runs",
            subtitle: "noise band ± \(noise) (2.5σ, σ robust, at least the quantum) · \(analysis.changePoints.count) "
                + "change point(s), PELT · oldest run left, newest right",
            isBytes: series.isBytes, values: series.values, band: analysis.band,
            segments: analysis.segments.map { .init(start: $0.start, end: $0.end, median: $0.median) },
            changes: analysis.changePoints.map { change in
                let run = runs[series.runIndices[change.index]]
                return .init(
                    index: change.index,
                    label: "\(run.provenance.shortCommit.prefix(7)) \(Renderings.percent(change))")
            }
                + (analysis.newestRunStep.map { newest in
                    [
                        .init(
                            index: newest.index, label: "newest run \(Renderings.percent(newest))?",
                            isNewestRunOnly: true)
                    ]
                } ?? []),
            firstLabel: String(runs[series.runIndices[0]].provenance.shortCommit.prefix(7)),
            lastLabel: String(runs[series.runIndices[series.values.count - 1]].provenance.shortCommit.prefix(7)))
    }

    /// Draws `figure`.
    static func render(_ figure: HistorySeriesFigure, description: String? = nil) -> String {
        let values = figure.values
        let top = max(values.max() ?? 0, (figure.segments.map(\.median).max() ?? 0) + figure.band)
        let axis = ValueAxis(maximum: top, minimumPositive: 1, scale: .linear, isBytes: figure.isBytes)
        var chart = Canvas(count: values.count, axis: axis)
        chart.svg.text(figure.title, x: left, y: 24, size: 15, weight: "bold")
        chart.svg.text(figure.subtitle, x: left, y: 42, size: 11, fill: "#555555")
        chart.drawAxes()
        for segment in figure.segments { chart.drawSegment(segment, band: figure.band) }
        chart.drawValues(values)
        for change in figure.changes { chart.drawChange(change) }
        chart.drawRunLabels(first: figure.firstLabel, last: figure.lastLabel)
        return chart.svg.render(title: figure.title, description: description ?? figure.title)
    }

    private static func description(_ entry: AnalysedSeries, runs: [HistoryRun]) -> String {
        let series = entry.series
        let steps = entry.analysis.changePoints.map { change in
            let run = runs[series.runIndices[change.index]]
            return
                "at \(run.provenance.shortCommit) from \(Renderings.format(change.medianBefore, isBytes: series.isBytes)) "
                + "to \(Renderings.format(change.medianAfter, isBytes: series.isBytes))"
        }
        let newest = entry.analysis.newestRunStep.map {
            " The newest run alone moved \(Renderings.percent($0)), a step if the runs after it stay there."
        }
        return
            "\(series.key.figure) of \(series.key.strategy) in \(series.key.scenario) over \(series.values.count) runs; "
            + (steps.isEmpty ? "no change point." : "change points " + steps.joined(separator: "; ") + ".")
            + (newest ?? "")
    }

    /// The drawing: positions of runs and values, and the document they are drawn into.
    struct Canvas {
        let count: Int
        let axis: ValueAxis
        var svg = SVGDocument(width: HistoryChart.width, height: HistoryChart.height)
        let plotWidth = HistoryChart.width - HistoryChart.left - HistoryChart.right
        let plotHeight = HistoryChart.height - HistoryChart.top - HistoryChart.bottom

        init(count: Int, axis: ValueAxis) {
            self.count = count
            self.axis = axis
        }

        func x(_ index: Double) -> Double {
            HistoryChart.left + (count > 1 ? index / Double(count - 1) : 0.5) * plotWidth
        }
        func y(_ value: Double) -> Double { HistoryChart.top + (1 - axis.fraction(value)) * plotHeight }

        mutating func drawAxes() {
            for tick in axis.ticks {
                svg.line(
                    x1: HistoryChart.left, y1: y(tick), x2: HistoryChart.left + plotWidth, y2: y(tick),
                    stroke: "#e5e5e5")
                svg.text(
                    axis.label(tick), x: HistoryChart.left - 6, y: y(tick) + 4, size: 10, anchor: .end, fill: "#555555")
            }
            let bottom = HistoryChart.top + plotHeight
            svg.line(
                x1: HistoryChart.left, y1: bottom, x2: HistoryChart.left + plotWidth, y2: bottom, stroke: "#888888")
        }

        mutating func drawSegment(_ segment: HistorySeriesFigure.Segment, band: Double) {
            let start = x(Double(segment.start) - (segment.start > 0 ? 0.5 : 0))
            let end = x(Double(segment.end - 1) + (segment.end < count ? 0.5 : 0))
            let high = y(segment.median + band)
            svg.rect(
                x: start, y: high, width: max(end - start, 2), height: y(segment.median - band) - high, fill: "#56B4E9",
                opacity: 0.25)
            svg.line(
                x1: start, y1: y(segment.median), x2: max(end, start + 2), y2: y(segment.median), stroke: "#0072B2",
                width: 1.5, dash: "6 3")
        }

        mutating func drawValues(_ values: [Double]) {
            let points = HistoryChart.reduced(values).map { (x($0.index), y($0.value)) }
            svg.polyline(points, stroke: "#222222", width: 1.2)
            guard values.count <= 60 else { return }
            for (index, value) in values.enumerated() {
                svg.circle(x: x(Double(index)), y: y(value), radius: 3, fill: "#222222")
            }
        }

        mutating func drawChange(_ change: HistorySeriesFigure.Change) {
            let label = change.label
            let colour = change.isNewestRunOnly ? "#777777" : "#D55E00"
            let position = x(Double(change.index) - 0.5)
            svg.line(
                x1: position, y1: HistoryChart.top - 6, x2: position, y2: HistoryChart.top + plotHeight,
                stroke: colour, width: 1.5)
            let anchor: SVGDocument.Anchor = position > HistoryChart.left + plotWidth * 0.7 ? .end : .start
            svg.text(
                label, x: position + (anchor == .end ? -4 : 4), y: HistoryChart.top + 4, size: 11, anchor: anchor,
                fill: colour, weight: "bold", halo: true)
        }

        mutating func drawRunLabels(first: String, last: String) {
            let baseline = HistoryChart.top + plotHeight + 16
            svg.text(first, x: x(0), y: baseline, size: 10, fill: "#555555")
            if count > 1 {
                svg.text(last, x: x(Double(count - 1)), y: baseline, size: 10, anchor: .end, fill: "#555555")
            }
            svg.text(
                "runs in commit order (author time)", x: HistoryChart.left + plotWidth / 2, y: baseline + 20, size: 11,
                anchor: .middle, fill: "#555555")
        }
    }

    /// At most `maximumPoints` points: a longer series keeps the smallest and largest value of each column, so
    /// no step or spike disappears.
    static func reduced(_ values: [Double]) -> [(index: Double, value: Double)] {
        guard values.count > maximumPoints else { return values.enumerated().map { (Double($0.offset), $0.element) } }
        let buckets = maximumPoints / 2
        var result: [(index: Double, value: Double)] = []
        for bucket in 0..<buckets {
            let start = bucket * values.count / buckets
            let end = max((bucket + 1) * values.count / buckets, start + 1)
            let slice = values[start..<end]
            guard let low = slice.indices.min(by: { values[$0] < values[$1] }),
                let high = slice.indices.max(by: { values[$0] < values[$1] })
            else { continue }
            for index in [low, high].sorted() where result.last?.index != Double(index) {
                result.append((Double(index), values[index]))
            }
        }
        return result
    }
}
