import HarnessModel

/// A report as typed content: the one value that `report.md`, `report.html` (its body and its page data), the SVG
/// charts, the terminal's readings and the history pages are rendered from.
///
/// The stages are named by their types, as in swift-openapi-generator's pipeline: `RunRecord` (the lossless record)
/// → `ReportDocument` (everything a view shows, computed once: rankings, readings, flame trees, peak markers,
/// medians, verdict reasons in words) → renderings (`MarkdownRenderer`, `HtmlRenderer`, the figures' SVG
/// renderers, `TerminalRenderer`). A renderer only lays out what the document holds; it computes no figure and
/// builds no tree, and nothing is ever parsed back out of a rendering.
///
/// ## Adding a section
/// Write a function of the builder that returns a `Section` (or nil when the run has nothing to show) from the
/// record, and call it where the section goes in its parent's `blocks`. Fill it with the generic blocks:
/// paragraphs of `Phrase`s (words with typed values: bytes, ratios, durations, signed changes, counts, names, links),
/// `Table`s whose cells are phrases, lists, and figures of the generic kinds (`BarFigure`, `PanelsFigure`, a
/// `FlameFigure` over a `FlameTree`, a `PathFigure`). No renderer changes: every renderer draws every generic block.
/// Only a new kind of figure needs renderers of its own (its SVG drawing and, for the page, its drawing in
/// report.js with its fields in the page data's schema).
public struct ReportDocument: Sendable, Hashable {
    /// The level-1 heading.
    public var title: Phrase
    /// The content in reading order; sections hold their own blocks.
    public var blocks: [Block]

    public init(title: Phrase, blocks: [Block]) {
        self.title = title
        self.blocks = blocks
    }
}

/// One block of a document or a section.
public indirect enum Block: Sendable, Hashable {
    /// A section with a heading and its own blocks.
    case section(Section)
    /// A paragraph: one phrase.
    case paragraph(Phrase)
    /// A bulleted list.
    case list([ListItem])
    /// A table with typed cells.
    case table(Table)
    /// A figure: drawn as SVG (where it has a file), and on the page by report.js or as that SVG.
    case figure(FigureBlock)
}

/// A titled part of the document: a scenario, a scenario's leaks, the environment.
public struct Section: Sendable, Hashable {
    /// Its heading's level: 2 under the title, 3 under a level-2 section (Markdown stops at 6).
    public var level: Int
    public var heading: Phrase
    public var blocks: [Block]
    /// The scenario the section is about, by its index in the record (the page's views find their data by it); nil
    /// for any other section.
    public var scenario: Int?

    public init(level: Int, heading: Phrase, blocks: [Block] = [], scenario: Int? = nil) {
        self.level = min(max(level, 1), 6)
        self.heading = heading
        self.blocks = blocks
        self.scenario = scenario
    }
}

/// A bullet: its phrase and the bullets nested under it.
public struct ListItem: Sendable, Hashable {
    public var phrase: Phrase
    public var items: [ListItem]

    public init(_ phrase: Phrase, items: [ListItem] = []) {
        self.phrase = phrase
        self.items = items
    }
}

/// A table: columns (a header and an alignment each) and rows of cells, one per column.
public struct Table: Sendable, Hashable {
    public struct Column: Sendable, Hashable {
        public enum Alignment: Sendable, Hashable {
            /// Words (left).
            case text
            /// Figures (right).
            case number
        }

        public var header: Phrase
        public var alignment: Alignment
        /// The column tells which row it is (a check's status and name): a renderer short of room keeps it on the
        /// row the longest.
        public var identifiesRow: Bool

        public init(_ header: Phrase, _ alignment: Alignment = .text, identifiesRow: Bool = false) {
            self.header = header
            self.alignment = alignment
            self.identifiesRow = identifiesRow
        }
    }

    public var columns: [Column]
    /// Each row's cells: a phrase each (a typed value, a name, words), as many as there are columns.
    public var rows: [[Phrase]]

    public init(columns: [Column], rows: [[Phrase]] = []) {
        self.columns = columns
        self.rows = rows
    }
}

/// A figure in its place: what it draws, the file its SVG rendering is written to (nil for a view only the page
/// draws) and its description for readers who do not see it.
public struct FigureBlock: Sendable, Hashable {
    public var chart: Chart
    /// The relative path of the figure's SVG file in the report folder (`charts/live-query-timeline.svg`).
    public var file: String?
    /// The figure in words (an image's alternative text).
    public var alt: String

    public init(_ chart: Chart, file: String? = nil, alt: String) {
        self.chart = chart
        self.file = file
        self.alt = alt
    }
}
