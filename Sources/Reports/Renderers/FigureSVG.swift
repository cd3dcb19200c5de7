/// The SVG file of a figure: each kind's drawing. Nil for the page's own views (they have no file).
enum FigureSVG {
    static func render(_ chart: Chart) -> String? {
        switch chart {
        case .timeline(let figure): return TimelineChart.render(figure)
        case .bars(let figure): return PeakBarChart.render(figure)
        case .panels(let figure): return GaugeChart.render(figure)
        case .flame(let figure): return FlameGraph.render(figure)
        case .cycle(let figure): return CycleDiagram.svg(figure)
        case .differentialFlame(let figure): return DifferentialFlameGraph.render(figure)
        case .historySeries(let figure): return HistoryChart.render(figure)
        case .path, .explore: return nil
        }
    }
}

extension ReportDocument {
    /// Every figure of the document in reading order, those in sections included.
    public var figures: [FigureBlock] { blocks.flatMap(\.figures) }
}

extension Block {
    var figures: [FigureBlock] {
        switch self {
        case .figure(let figure): return [figure]
        case .section(let section): return section.blocks.flatMap(\.figures)
        case .paragraph, .list, .table: return []
        }
    }
}
