/// A query predicate of the form `field == literal`, e.g. `store_id == 'abc123'`.
///
/// Only equality on one field is modelled: it is all the workloads need to select a share of a
/// collection. `_id` may be used as the field.
public struct Predicate: Sendable, Hashable, CustomStringConvertible {
    /// The field compared.
    public var field: String
    /// The value it must equal.
    public var value: FieldValue

    /// A predicate matching documents whose `field` equals `value`.
    public init(_ field: String, equals value: FieldValue) {
        self.field = field
        self.value = value
    }

    /// Reads `field == literal`, where the literal is `'text'`, `"text"`, a whole number, `true` or `false`.
    public init(parsing text: String) throws(StoreError) {
        let parts = text.split(separator: "==", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw .invalidQuery(text, reason: "expected FIELD == VALUE, e.g. store_id == 'abc123'")
        }
        let field = parts[0].trimmingSpaces
        let literal = parts[1].trimmingSpaces
        guard let first = field.first, first.isLetter || first == "_",
            field.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
        else {
            throw .invalidQuery(
                text, reason: "'\(field)' is not a field name (letters, digits and _, not starting with a digit)")
        }
        let value: FieldValue
        if literal.count >= 2, let quote = literal.first, quote == "'" || quote == "\"", literal.last == quote {
            value = .string(String(literal.dropFirst().dropLast()))
        } else if let number = Int(literal) {
            value = .int(number)
        } else if literal == "true" || literal == "false" {
            value = .bool(literal == "true")
        } else {
            throw .invalidQuery(
                text, reason: "'\(literal)' is not a value; expected 'text', a whole number, true or false")
        }
        self.init(field, equals: value)
    }

    /// True when `document` satisfies the predicate.
    public func matches(_ document: Document) -> Bool {
        document[field] == value
    }

    /// The predicate as a query string.
    public var description: String { "\(field) == \(value)" }
}

/// What a live query or observer selects: a collection, an optional predicate and an order.
public struct Query: Sendable, Hashable {
    /// The collection queried.
    public var collection: String
    /// Documents must satisfy this; nil selects the whole collection.
    public var predicate: Predicate?
    /// The field results are sorted by (then by `_id`); nil sorts by `_id` alone.
    public var orderBy: String?
    /// Sort direction of `orderBy`.
    public var ascending: Bool

    /// A query over `collection`.
    public init(collection: String, predicate: Predicate? = nil, orderBy: String? = nil, ascending: Bool = true) {
        self.collection = collection
        self.predicate = predicate
        self.orderBy = orderBy
        self.ascending = ascending
    }

    /// The shape of query strings `init(parsing:)` reads.
    public static let grammar = "SELECT * FROM collection [WHERE field == value] [ORDER BY field [ASC|DESC]]"

    /// Reads the query language subset of store observers, e.g.
    /// `SELECT * FROM cars WHERE store_id == 'abc123' ORDER BY rank DESC` (keywords in any case).
    public init(parsing text: String) throws(StoreError) {
        let tokens = Self.tokens(text)
        func fail(_ reason: String) -> StoreError { .invalidQuery(text, reason: "\(reason); expected \(Self.grammar)") }
        func keyword(_ index: Int, _ word: String) -> Bool {
            index < tokens.count && tokens[index].uppercased() == word
        }
        guard keyword(0, "SELECT"), tokens.count > 1, tokens[1] == "*", keyword(2, "FROM") else {
            throw fail("a query starts with SELECT * FROM")
        }
        guard tokens.count > 3 else { throw fail("no collection after FROM") }
        self.init(collection: tokens[3])
        var index = 4
        if keyword(index, "WHERE") {
            var end = index + 1
            while end < tokens.count && !(keyword(end, "ORDER") && keyword(end + 1, "BY")) { end += 1 }
            guard end > index + 1 else { throw fail("no condition after WHERE") }
            predicate = try Predicate(parsing: tokens[(index + 1)..<end].joined(separator: " "))
            index = end
        }
        if keyword(index, "ORDER") && keyword(index + 1, "BY") {
            guard index + 2 < tokens.count else { throw fail("no field after ORDER BY") }
            orderBy = tokens[index + 2]
            index += 3
            if keyword(index, "ASC") || keyword(index, "DESC") {
                ascending = keyword(index, "ASC")
                index += 1
            }
        }
        guard index == tokens.count else { throw fail("unexpected '\(tokens[index])'") }
    }

    /// Words separated by spaces; a quoted literal is one word, spaces and all.
    private static func tokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        var quote: Character?
        for character in text {
            if let open = quote {
                current.append(character)
                if character == open { quote = nil }
            } else if character == " " || character == "\n" || character == "\t" {
                if !current.isEmpty { tokens.append(current) }
                current = ""
            } else {
                if character == "'" || character == "\"" { quote = character }
                current.append(character)
            }
        }
        if !current.isEmpty { tokens.append(current) }
        return tokens
    }

    /// True when `lhs` comes before `rhs` in this query's result order.
    func precedes(_ lhs: Document, _ rhs: Document) -> Bool {
        if let orderBy {
            let left = lhs[orderBy]
            let right = rhs[orderBy]
            if left != right {
                // A document without the sort field sorts first, as a null would.
                guard let left else { return ascending }
                guard let right else { return !ascending }
                return ascending ? left < right : right < left
            }
        }
        return lhs.id < rhs.id
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
