/// A part of a document as plain text for the terminal (the check table after a run): headings and paragraphs as
/// lines, tables as aligned columns, list items each on a line of its own, names bare, values as `Value.text`
/// spells them. Nothing is ever cut: a line wider than `width` columns is wrapped, a table cell too wide for its
/// column goes under its row.
public enum TerminalRenderer {
    /// Blocks as lines of text at most `width` columns wide, a blank line after each block and one line break at
    /// the end. `wrapsText` false: paragraphs and list items stay whole on one line each (a CI log, where a grep
    /// finds a line whole); tables still keep to `width`.
    public static func render(_ blocks: [Block], width: Int, wrapsText: Bool = true) -> String {
        var lines = blocks.flatMap { render($0, width: width, textWidth: wrapsText ? width : Int.max / 4) }
        while lines.last == "" { lines.removeLast() }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The indent of a wrapped paragraph's or list item's continuation lines and of a cell under its row.
    static let indent = 6

    static func render(_ block: Block, width: Int, textWidth: Int) -> [String] {
        switch block {
        case .section(let section):
            return [section.heading.plainText]
                + section.blocks.flatMap { render($0, width: width, textWidth: textWidth) }
        case .paragraph(let phrase): return wrapped(phrase.plainText, to: textWidth, indent: indent) + [""]
        case .list(let items): return items.flatMap { item(0, $0, width: textWidth) } + [""]
        case .table(let table): return self.table(table, width: width) + [""]
        case .figure(let figure): return wrapped(figure.alt, to: textWidth, indent: indent) + [""]
        }
    }

    /// A list item on a line of its own (no bullet), its continuation lines and nested items indented.
    private static func item(_ depth: Int, _ item: ListItem, width: Int) -> [String] {
        let margin = String(repeating: " ", count: 2 * depth)
        return wrapped(item.phrase.plainText, to: width - margin.count, indent: indent).map { margin + $0 }
            + item.items.flatMap { self.item(depth + 1, $0, width: width) }
    }

    /// The table in columns two spaces apart, figures right-aligned. A table wider than `width` makes room by
    /// sending its widest cells under their rows (`fitted`): each such cell goes there, after its column's header, on
    /// lines of its own (a long leak verdict does not push every row off the screen). A table whose headers alone
    /// are too wide has each row as a paragraph instead: its cells one after another, each after its header.
    static func table(_ table: Table, width: Int) -> [String] {
        let headers = table.columns.map(\.header.plainText)
        // A cell is one line on the terminal.
        let rows = table.rows.map { $0.map { String($0.plainText.map { $0.isNewline ? " " : $0 }) } }
        let naming = Set(table.columns.indices.filter { table.columns[$0].identifiesRow })
        guard let widths = fitted(headers: headers, rows: rows, width: width, keeping: naming) else {
            return rows.flatMap { row in
                let cells = zip(headers, row).map { header, cell in header.isEmpty ? cell : "\(header) \(cell)" }
                return wrapped(cells.joined(separator: " · "), to: width, indent: indent)
            }
        }
        let margin = String(repeating: " ", count: indent)
        return ([headers] + rows).flatMap { row in
            let below = row.indices.filter { displayWidth(row[$0]) > widths[$0] }
            let line = row.indices.map { column in
                let text = below.contains(column) ? "" : row[column]
                let padding = String(repeating: " ", count: max(0, widths[column] - displayWidth(text)))
                return table.columns[column].alignment == .number ? padding + text : text + padding
            }.joined(separator: "  ").trimmingTrailingSpaces()
            return [line]
                + below.flatMap { column in
                    let text = headers[column].isEmpty ? row[column] : "\(headers[column]): \(row[column])"
                    return wrapped(text, to: width - indent, indent: 0).map { margin + $0 }
                }
        }
    }

    /// Each column's width: its widest cell, until the table is wider than `width`; then, again and again, the
    /// column that gains the most room per cell it sends under its row is narrowed to its next widest cell (a long
    /// verdict goes first); never below a column's header. The columns of `keeping` (those that tell which row it is) are
    /// narrowed only once no other column can be. Nil when the headers alone do not fit.
    static func fitted(headers: [String], rows: [[String]], width: Int, keeping: Set<Int> = []) -> [Int]? {
        let cells = headers.indices.map { column in rows.map { displayWidth($0[column]) } }
        let least = headers.map(displayWidth)
        var widths = headers.indices.map { max(least[$0], cells[$0].max() ?? 0) }
        let gaps = 2 * max(0, widths.count - 1)
        while widths.reduce(0, +) + gaps > width {
            var best: (column: Int, width: Int, gain: Double)?
            let narrowable = widths.indices.filter { widths[$0] > least[$0] }
            let others = narrowable.filter { !keeping.contains($0) }
            for column in others.isEmpty ? narrowable : others {
                let narrower = max(least[column], cells[column].filter { $0 < widths[column] }.max() ?? 0)
                // At least one cell is wider than the header, so at least one goes under its row.
                let sent = cells[column].filter { $0 > narrower && $0 <= widths[column] }.count
                let gain = Double(widths[column] - narrower) / Double(max(1, sent))
                if gain > best?.gain ?? 0 { best = (column, narrower, gain) }
            }
            guard let best else { return nil }
            widths[best.column] = best.width
        }
        return widths
    }

    /// The columns `text` takes on a terminal: one per character, two for a character drawn as an emoji (✅, ❌).
    static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { sum, character in
            sum + (character.unicodeScalars.first?.properties.isEmojiPresentation == true ? 2 : 1)
        }
    }

    /// `text` in lines of at most `width` characters: each line of it broken at the last space that fits (that
    /// space dropped), a word longer than a line cut where the line ends; every line after the first starts
    /// with `indent` spaces. A width that leaves no room after the indent gives the text's lines unbroken.
    static func wrapped(_ text: String, to width: Int, indent: Int) -> [String] {
        let continuation = String(repeating: " ", count: max(0, indent))
        guard width > continuation.count else { return text.split(separator: "\n").map(String.init) }
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var rest = Substring(paragraph)
            var prefix = lines.isEmpty ? "" : continuation
            while prefix.count + rest.count > width {
                let room = width - prefix.count
                // One character past the room: a space there is a break that fills the line exactly.
                let window = rest.prefix(room + 1)
                if let space = window.lastIndex(of: " "), space > rest.startIndex {
                    lines.append(prefix + rest[..<space])
                    rest = rest[rest.index(after: space)...]
                } else {
                    let cut = rest.index(rest.startIndex, offsetBy: room)
                    lines.append(prefix + rest[..<cut])
                    rest = rest[cut...]
                }
                prefix = continuation
            }
            lines.append(prefix + rest)
        }
        return lines
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = Substring(self)
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
