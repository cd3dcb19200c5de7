import Foundation

/// The Markdown that `MarkdownReport` writes, as HTML: the page shows every table and paragraph of `report.md`
/// from the very text `report.md` holds, so the two never disagree.
///
/// Only the subset the report writers emit is understood: ATX headings (with GitHub's anchor ids, so the
/// report's `#scenario` links work), paragraphs, pipe tables with their alignment row, `- ` lists, lines that are
/// one image, and inline code spans, `**bold**`, `[links](target)` and backslash escapes. Everything else is text,
/// escaped: a scenario's description cannot inject markup.
struct HtmlMarkdown {
    /// What a line that is one image (`![alt](path)`) becomes: the figure's HTML.
    let image: (_ alt: String, _ path: String) -> String
    /// Where the HTML goes at the end of a level-2 section (before the next `## ` heading and at the end): the
    /// heading's text in, HTML out (the interactive views of a scenario follow its section).
    let sectionEnd: (_ heading: String) -> String

    /// Renders `markdown` as HTML blocks.
    func render(_ markdown: String) -> String {
        var out: [String] = []
        var slugs = Slugs()
        var paragraph: [String] = []
        var section: String?
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func flush() {
            if !paragraph.isEmpty { out.append("<p>\(Self.inline(paragraph.joined(separator: " ")))</p>") }
            paragraph = []
        }
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if let (level, text) = Self.heading(line) {
                flush()
                if level <= 2, let heading = section { out.append(sectionEnd(heading)) }
                if level == 2 { section = text } else if level < 2 { section = nil }
                let id = slugs.make(Self.plainText(text))
                out.append("<h\(level) id=\"\(HtmlText.escape(id))\">\(Self.inline(text))</h\(level)>")
            } else if line.hasPrefix("|") {
                flush()
                let rows = lines[index...].prefix { $0.hasPrefix("|") }
                out.append(Self.table(Array(rows)))
                index += rows.count
                continue
            } else if line.hasPrefix("- ") {
                flush()
                let items = lines[index...].prefix { $0.hasPrefix("- ") }
                out.append("<ul>" + items.map { "<li>\(Self.inline(String($0.dropFirst(2))))</li>" }.joined() + "</ul>")
                index += items.count
                continue
            } else if let (alt, path) = Self.imageLine(line) {
                flush()
                out.append(image(alt, path))
            } else if line.trimmingCharacters(in: .whitespaces).isEmpty {
                flush()
            } else {
                paragraph.append(line.hasPrefix("> ") ? String(line.dropFirst(2)) : line)
            }
            index += 1
        }
        flush()
        if let heading = section { out.append(sectionEnd(heading)) }
        return out.joined(separator: "\n")
    }

    /// `## text` → (2, text).
    static func heading(_ line: String) -> (Int, String)? {
        let hashes = line.prefix { $0 == "#" }.count
        guard (1...6).contains(hashes), line.dropFirst(hashes).first == " " else { return nil }
        return (hashes, String(line.dropFirst(hashes + 1)))
    }

    /// `![alt](path)` alone on its line → (alt, path).
    static func imageLine(_ line: String) -> (String, String)? {
        guard line.hasPrefix("!["), line.hasSuffix(")"), let middle = line.range(of: "](", options: .backwards)
        else { return nil }
        let alt = line[line.index(line.startIndex, offsetBy: 2)..<middle.lowerBound]
        let path = line[middle.upperBound..<line.index(before: line.endIndex)]
        return (String(alt), String(path))
    }

    /// A pipe table: header, alignment row, body rows.
    static func table(_ rows: [String]) -> String {
        let cells = rows.map(Self.cells)
        guard cells.count >= 2 else { return "<p>\(inline(rows.joined(separator: " ")))</p>" }
        let alignments = cells[1].map { cell -> String in
            let text = cell.trimmingCharacters(in: .whitespaces)
            return text.hasSuffix(":") ? (text.hasPrefix(":") ? " class=\"c\"" : " class=\"r\"") : ""
        }
        func row(_ values: [String], tag: String) -> String {
            "<tr>"
                + values.enumerated().map { column, value in
                    let align = column < alignments.count ? alignments[column] : ""
                    return "<\(tag)\(align)>\(inline(value.trimmingCharacters(in: .whitespaces)))</\(tag)>"
                }.joined() + "</tr>"
        }
        return "<div class=\"table\"><table><thead>\(row(cells[0], tag: "th"))</thead><tbody>"
            + cells.dropFirst(2).map { row($0, tag: "td") }.joined(separator: "\n") + "</tbody></table></div>"
    }

    /// The cells of `| a | b \| c |`: split at pipes no backslash escapes (GFM's rule, code spans included).
    static func cells(_ row: String) -> [String] {
        var cells: [String] = []
        var current = ""
        var escaped = false
        for character in row.dropFirst() {
            if escaped {
                current.append(character == "|" ? "|" : "\\\(character)")
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "|" {
                cells.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.trimmingCharacters(in: .whitespaces).isEmpty { cells.append(current) }
        return cells
    }

    /// The text of inline Markdown without its markup (for anchors): code fences, `**` and link targets dropped.
    static func plainText(_ text: String) -> String {
        var result = ""
        for token in InlineTokens(text) {
            switch token {
            case .text(let value), .code(let value): result += value
            case .strong: break
            case .link(let label, _): result += plainText(label)
            }
        }
        return result
    }

    /// Inline Markdown as HTML.
    static func inline(_ text: String) -> String {
        var result = ""
        var strong = false
        for token in InlineTokens(text) {
            switch token {
            case .text(let value): result += HtmlText.escape(value)
            case .code(let value): result += "<code>\(HtmlText.escape(value))</code>"
            case .strong:
                result += strong ? "</strong>" : "<strong>"
                strong.toggle()
            case .link(let label, let target):
                result += "<a href=\"\(HtmlText.escape(target))\">\(inline(label))</a>"
            }
        }
        return result + (strong ? "</strong>" : "")
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

/// The inline tokens of a line of Markdown, in order.
struct InlineTokens: Sequence, IteratorProtocol {
    enum Token: Equatable {
        case text(String)
        case code(String)
        /// `**`: opens or closes bold.
        case strong
        case link(label: String, target: String)
    }

    private let characters: [Character]
    private var position = 0

    init(_ text: String) { characters = Array(text) }

    mutating func next() -> Token? {
        guard position < characters.count else { return nil }
        if characters[position] == "`", let code = codeSpan() { return code }
        if characters[position] == "*", peek(1) == "*" {
            position += 2
            return .strong
        }
        if characters[position] == "[", let link = link() { return link }
        var text = ""
        while position < characters.count {
            let character = characters[position]
            if character == "`" || character == "[" || (character == "*" && peek(1) == "*") {
                if !text.isEmpty { break }
                text.append(character)
                position += 1
                continue
            }
            if character == "\\", let escaped = peek(1), escaped.isPunctuation || escaped.isSymbol {
                text.append(escaped)
                position += 2
                continue
            }
            text.append(character)
            position += 1
        }
        return .text(text)
    }

    private func peek(_ offset: Int) -> Character? {
        position + offset < characters.count ? characters[position + offset] : nil
    }

    /// A code span: a run of backticks, the text, the same run; one space of padding on both sides is dropped.
    private mutating func codeSpan() -> Token? {
        let fence = characters[position...].prefix { $0 == "`" }.count
        var index = position + fence
        while index < characters.count {
            guard characters[index] == "`" else {
                index += 1
                continue
            }
            let run = characters[index...].prefix { $0 == "`" }.count
            if run == fence {
                var body = String(characters[(position + fence)..<index])
                if body.count >= 2, body.hasPrefix(" "), body.hasSuffix(" ") {
                    body = String(body.dropFirst().dropLast())
                }
                position = index + run
                return .code(body)
            }
            index += run
        }
        return nil
    }

    /// `[label](target)`, the label's brackets balanced.
    private mutating func link() -> Token? {
        var depth = 0
        var index = position
        while index < characters.count {
            if characters[index] == "[" { depth += 1 }
            if characters[index] == "]" {
                depth -= 1
                if depth == 0 { break }
            }
            index += 1
        }
        guard index + 1 < characters.count, characters[index + 1] == "(",
            let close = characters[(index + 2)...].firstIndex(of: ")")
        else { return nil }
        let label = String(characters[(position + 1)..<index])
        let target = String(characters[(index + 2)..<close])
        position = close + 1
        return .link(label: label, target: target)
    }
}

/// Text made safe for HTML: the five characters with a meaning there as entities.
enum HtmlText {
    static func escape(_ text: String) -> String { SVGDocument.escape(text) }
}
