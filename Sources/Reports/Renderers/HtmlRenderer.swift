import Foundation

/// The body of `report.html` from a document: every heading (with GitHub's anchor ids), paragraph, list and table,
/// and each figure as the page shows it: a timeline or flame graph as the host report.js draws into, any other
/// chart as its own SVG inlined as a `data:` image; after each scenario's section, the host of its explore views.
struct HtmlRenderer {
    /// Whether the page data has a timeline for the scenario of this index.
    let hasTimeline: (Int) -> Bool
    /// Whether the scenario of this index has explore views.
    let explores: (Int) -> Bool
    private var slugs = Slugs()
    private var scenario: Int?

    init(hasTimeline: @escaping (Int) -> Bool, explores: @escaping (Int) -> Bool) {
        self.hasTimeline = hasTimeline
        self.explores = explores
    }

    mutating func render(_ document: ReportDocument) -> String {
        var out: [String] = []
        if !document.title.isEmpty { out.append(heading(1, document.title)) }
        for block in document.blocks { out += render(block) }
        return out.joined(separator: "\n")
    }

    private mutating func heading(_ level: Int, _ phrase: Phrase) -> String {
        let id = slugs.make(phrase.plainText)
        return "<h\(level) id=\"\(HtmlText.escape(id))\">\(Self.inline(phrase))</h\(level)>"
    }

    private mutating func render(_ block: Block) -> [String] {
        switch block {
        case .section(let section):
            let outer = scenario
            if let index = section.scenario { scenario = index }
            var out = [heading(section.level, section.heading)] + section.blocks.flatMap { render($0) }
            if let index = section.scenario, explores(index) {
                out.append("<div class=\"mh-explore\" data-scenario=\"\(index)\"></div>")
            }
            scenario = outer
            return out
        case .paragraph(let phrase): return ["<p>\(Self.inline(phrase))</p>"]
        case .list(let items): return [Self.list(items)]
        case .table(let table): return [Self.render(table)]
        case .figure(let figure): return [self.figure(figure)]
        }
    }

    private static func list(_ items: [ListItem]) -> String {
        "<ul>"
            + items.map { "<li>\(inline($0.phrase))" + ($0.items.isEmpty ? "" : list($0.items)) + "</li>" }.joined()
            + "</ul>"
    }

    static func render(_ table: Table) -> String {
        let alignments = table.columns.map { $0.alignment == .number ? " class=\"r\"" : "" }
        func row(_ cells: [Phrase], tag: String) -> String {
            "<tr>"
                + cells.enumerated().map { column, cell in
                    let align = column < alignments.count ? alignments[column] : ""
                    return "<\(tag)\(align)>\(inline(cell))</\(tag)>"
                }.joined() + "</tr>"
        }
        return "<div class=\"table\"><table><thead>\(row(table.columns.map(\.header), tag: "th"))</thead><tbody>"
            + table.rows.map { row($0, tag: "td") }.joined(separator: "\n") + "</tbody></table></div>"
    }

    private func figure(_ block: FigureBlock) -> String {
        let alt = HtmlText.escape(block.alt)
        switch block.chart {
        case .timeline where scenario.map(hasTimeline) ?? false:
            return "<div class=\"mh-timeline\" data-scenario=\"\(scenario ?? 0)\" aria-label=\"\(alt)\"></div>"
        case .flame(let flame):
            return "<div class=\"mh-flame\" data-scenario=\"\(scenario ?? 0)\" "
                + "data-strategy=\"\(HtmlText.escape(flame.tree.columns[flame.column].strategy))\" aria-label=\"\(alt)\">"
                + "</div>"
        default:
            guard let svg = FigureSVG.render(block.chart) else {
                return block.file.map { "<p><a href=\"\(HtmlText.escape($0))\">\(alt)</a></p>" } ?? ""
            }
            return "<figure><img alt=\"\(alt)\" src=\"data:image/svg+xml;base64,"
                + Data(svg.utf8).base64EncodedString() + "\"></figure>"
        }
    }

    /// A phrase as inline HTML.
    static func inline(_ phrase: Phrase) -> String {
        phrase.spans.map { span in
            switch span {
            case .text(let text): return HtmlText.escape(text)
            case .code(let name): return "<code>\(HtmlText.escape(name))</code>"
            case .strong(let inner): return "<strong>\(inline(inner))</strong>"
            case .link(let text, let target):
                return "<a href=\"\(HtmlText.escape(MarkdownRenderer.destination(target)))\">\(inline(text))</a>"
            case .value(let value): return HtmlText.escape(value.text)
            }
        }.joined()
    }
}

/// GitHub's heading anchors: lowercase, punctuation dropped, spaces as dashes, `-1`, `-2` for repeats.
struct Slugs {
    private var used: [String: Int] = [:]

    mutating func make(_ text: String) -> String {
        let base = String(
            text.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_"
                    ? character : nil
            })
        let count = used[base, default: 0]
        used[base] = count + 1
        return count == 0 ? base : "\(base)-\(count)"
    }
}

/// Text made safe for HTML: the five characters with a meaning there as entities.
enum HtmlText {
    static func escape(_ text: String) -> String { SVGDocument.escape(text) }
}
