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

    /// A table that fits its page (report.css lets its cells wrap): a number column's cells are right-aligned and
    /// keep each figure whole (a number with its unit, an interval with its `±` or `–`) while words in them wrap;
    /// the columns that identify a row (`id`: those declared so, else the first of words) keep their names whole
    /// when a table too wide breaks other names anywhere; a header may break between the words of a camelCase name,
    /// a name spelled as code where its parts meet (before a `.` or `(`, after a `:`, `,`, `/` or `<`).
    static func render(_ table: Table) -> String {
        let first = table.columns.firstIndex { $0.alignment == .text }
        let identifying =
            table.columns.contains(where: \.identifiesRow)
            ? table.columns.map(\.identifiesRow) : table.columns.indices.map { $0 == first }
        let numbers = table.columns.map { $0.alignment == .number }
        let classes = table.columns.indices.map { column in
            let names = (numbers[column] ? ["r"] : []) + (identifying[column] ? ["id"] : [])
            return names.isEmpty ? "" : " class=\"\(names.joined(separator: " "))\""
        }
        func row(_ cells: [Phrase], tag: String) -> String {
            "<tr>"
                + cells.enumerated().map { column, cell in
                    let inColumn = column < table.columns.count
                    var html = inline(cell)
                    if tag == "th" {
                        html = HtmlText.mapText(html, HtmlText.camelCaseBreaks)
                    } else if inColumn && numbers[column] {
                        html = HtmlText.mapText(html, HtmlText.figuresKeptWhole)
                    }
                    html = HtmlText.codeBreaks(html)
                    return "<\(tag)\(inColumn ? classes[column] : "")>\(html)</\(tag)>"
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

    /// HTML with `transform` applied to its text only: tags (and their attributes) are left as they are.
    static func mapText(_ html: String, _ transform: (Substring) -> String) -> String {
        var out = ""
        var rest = html[...]
        while let open = rest.firstIndex(of: "<") {
            out += transform(rest[..<open])
            let close = rest[open...].firstIndex(of: ">").map { rest.index(after: $0) } ?? rest.endIndex
            out += rest[open..<close]
            rest = rest[close...]
        }
        return out + transform(rest)
    }

    /// Text with a line-break opportunity (`<wbr>`) where a camelCase name starts its next word
    /// (`peakDatabaseBytes` → `peak<wbr>Database<wbr>Bytes`).
    static func camelCaseBreaks(_ text: Substring) -> String {
        var out = ""
        var previous: Character?
        for character in text {
            if let previous, previous.isLowercase, character.isUppercase { out += "<wbr>" }
            out.append(character)
            previous = character
        }
        return out
    }

    /// HTML whose `<code>` spans have a line-break opportunity (`<wbr>`) before each `.` and `(` and after each `:`,
    /// `,`, `/` and `<` (escaped as `&lt;`), so a long qualified name or signature wraps where its parts meet.
    static func codeBreaks(_ html: String) -> String {
        var out = ""
        var rest = html[...]
        while let open = rest.range(of: "<code>"), let close = rest[open.upperBound...].range(of: "</code>") {
            out += rest[..<open.upperBound]
            var code = ""
            for character in rest[open.upperBound..<close.lowerBound] {
                if ".(".contains(character), !code.isEmpty { code += "<wbr>" }
                code.append(character)
                if ":,/".contains(character) || (character == ";" && code.hasSuffix("&lt;")) { code += "<wbr>" }
            }
            out += code + "</code>"
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    /// Text whose figures a line never breaks: the words a space after a digit (`1.57 MiB`, `184 blocks`) or around
    /// an interval's `±` or `–` joins, kept in one unbreakable span (report.css); the other spaces still break.
    static func figuresKeptWhole(_ text: Substring) -> String {
        var runs: [[Substring]] = []
        var previous: Substring?
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let joins = previous.map { joined($0, word) } ?? false
            if joins, !runs.isEmpty { runs[runs.count - 1].append(word) } else { runs.append([word]) }
            previous = word
        }
        return runs.map { run in
            run.count > 1 ? "<span class=\"fig\">" + run.joined(separator: " ") + "</span>" : String(run[0])
        }.joined(separator: " ")
    }

    /// Whether the space between two words is inside a figure: after a number, before a `±` or `–`, after one
    /// before a number (an interval's `–`, not a dash standing for no value).
    private static func joined(_ word: Substring, _ next: Substring) -> Bool {
        let dashes: Set<Substring> = ["±", "–"]
        let startsNumber = next.first.map { $0.isNumber || "+-".contains($0) } ?? false
        return word.last?.isNumber ?? false || dashes.contains(next) || (dashes.contains(word) && startsNumber)
    }
}
