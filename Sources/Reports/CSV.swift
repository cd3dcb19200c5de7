/// Builds RFC 4180 CSV text: comma-separated, CRLF line ends, fields quoted when they need it.
public struct CSVTable: Sendable {
    /// Column names, in order.
    public let columns: [String]
    private var lines: [String] = []

    public init(columns: [String]) {
        self.columns = columns
        lines.append(columns.map(Self.field).joined(separator: ","))
    }

    /// Appends a row; missing trailing cells are written empty.
    public mutating func append(_ cells: [String]) {
        var row = cells
        if row.count < columns.count { row += Array(repeating: "", count: columns.count - row.count) }
        lines.append(row.map(Self.field).joined(separator: ","))
    }

    /// Appends a row given by column name; columns without a value are left empty.
    public mutating func append(_ cells: [String: String]) {
        append(columns.map { cells[$0] ?? "" })
    }

    /// The CSV text, ending with CRLF.
    public var text: String {
        lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Quotes a field when it contains a comma, quote, CR or LF (quotes doubled).
    public static func field(_ value: String) -> String {
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
        return "\"" + value.replacingAll("\"", with: "\"\"") + "\""
    }

    /// Parses CSV text (RFC 4180) into rows of fields; used to read reports back.
    public static func parse(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var inQuotes = false
        var iterator = Array(text).makeIterator()
        var pending: Character? = nil
        func next() -> Character? {
            if let value = pending {
                pending = nil
                return value
            }
            return iterator.next()
        }
        while let character = next() {
            if inQuotes {
                if character == "\"" {
                    if let following = next() {
                        if following == "\"" {
                            field.append("\"")
                        } else {
                            inQuotes = false
                            pending = following
                        }
                    } else {
                        inQuotes = false
                    }
                } else {
                    field.append(character)
                }
            } else {
                switch character {
                case "\"": inQuotes = true
                case ",":
                    row.append(field)
                    field = ""
                case "\r\n", "\n":
                    row.append(field)
                    field = ""
                    rows.append(row)
                    row = []
                case "\r": break
                default: field.append(character)
                }
            }
        }
        if !field.isEmpty || !row.isEmpty {
            row.append(field)
            rows.append(row)
        }
        return rows
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
