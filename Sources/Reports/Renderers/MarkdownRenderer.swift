/// `report.md` (and every other Markdown file: history.md, diff.md, the step summary) from a document: GitHub
/// Flavored Markdown, a blank line after each block, names as code spans, pipes escaped in table cells.
public enum MarkdownRenderer {
    /// The document's text, ending in one line break.
    public static func render(_ document: ReportDocument) -> String {
        var lines = document.title.isEmpty ? [] : ["# " + inline(document.title), ""]
        for block in document.blocks { lines += render(block) }
        return text(lines)
    }

    /// Blocks without a title: a part of a page (the checks of a step summary).
    public static func render(_ blocks: [Block]) -> String {
        text(blocks.flatMap(render))
    }

    private static func text(_ lines: [String]) -> String {
        var lines = lines
        while lines.last == "" { lines.removeLast() }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A block's lines, each block followed by a blank line.
    static func render(_ block: Block) -> [String] {
        switch block {
        case .section(let section):
            return [String(repeating: "#", count: section.level) + " " + inline(section.heading), ""]
                + section.blocks.flatMap(render)
        case .paragraph(let phrase): return [inline(phrase), ""]
        case .list(let items): return items.flatMap { item(0, $0) } + [""]
        case .table(let table): return self.table(table) + [""]
        case .figure(let figure):
            guard let file = figure.file else { return [] }
            return ["![\(figure.alt)](\(file))", ""]
        }
    }

    private static func item(_ depth: Int, _ item: ListItem) -> [String] {
        [String(repeating: "  ", count: depth) + "- " + inline(item.phrase)]
            + item.items.flatMap { self.item(depth + 1, $0) }
    }

    /// A pipe table; an empty header cell is written `| |`.
    static func table(_ table: Table) -> [String] {
        var out = [
            "|" + table.columns.map { $0.header.isEmpty ? " |" : " \(inline($0.header, inTable: true)) |" }.joined()
        ]
        out.append("|" + table.columns.map { $0.alignment == .number ? "---:|" : "---|" }.joined())
        for row in table.rows {
            out.append("| " + row.map { inline($0, inTable: true) }.joined(separator: " | ") + " |")
        }
        return out
    }

    /// A phrase as inline Markdown; in a table cell (`inTable`) pipes are escaped and line breaks become spaces.
    public static func inline(_ phrase: Phrase, inTable: Bool = false) -> String {
        phrase.spans.map { span in
            switch span {
            case .text(let text): return inTable ? cell(text) : text
            case .code(let name): return code(name, inTable: inTable)
            case .strong(let inner): return "**" + inline(inner, inTable: inTable) + "**"
            case .link(let text, let target):
                return "[" + inline(text, inTable: inTable) + "](" + destination(target) + ")"
            case .value(let value): return value.text
            }
        }.joined()
    }

    static func destination(_ target: LinkTarget) -> String {
        switch target {
        case .section(let heading): return "#" + anchor(heading)
        case .file(let path): return path
        }
    }

    /// Escapes text for a table cell: pipes and line breaks would break the table.
    static func cell(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "|": result += "\\|"
            case "\n", "\r\n", "\r": result += " "
            default: result.append(character)
            }
        }
        return result
    }

    /// `text` as an inline code span: the fence is one backtick longer than the longest run of backticks
    /// inside, and line breaks become spaces. In a table cell (`inTable`) pipes are escaped too; in running
    /// text they need not be (and an escape would show).
    static func code(_ text: String, inTable: Bool = true) -> String {
        var longest = 0
        var run = 0
        for character in text {
            run = character == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: longest + 1)
        let padding = text.hasPrefix("`") || text.hasSuffix("`") ? " " : ""
        let body = inTable ? cell(text) : String(text.map { $0.isNewline ? " " : $0 })
        return fence + padding + body + padding + fence
    }

    /// GitHub's heading anchor: lowercase, spaces to dashes, punctuation dropped.
    static func anchor(_ heading: String) -> String {
        String(
            heading.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                if character.isLetter || character.isNumber || character == "-" || character == "_" { return character }
                return nil
            })
    }
}
