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
        guard parts.count == 2 else { throw .invalidQuery(text, reason: "expected FIELD == VALUE, e.g. store_id == 'abc123'") }
        let field = parts[0].trimmingSpaces
        let literal = parts[1].trimmingSpaces
        guard let first = field.first, first.isLetter || first == "_",
              field.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            throw .invalidQuery(text, reason: "'\(field)' is not a field name (letters, digits and _, not starting with a digit)")
        }
        let value: FieldValue
        if literal.count >= 2, let quote = literal.first, quote == "'" || quote == "\"", literal.last == quote {
            value = .string(String(literal.dropFirst().dropLast()))
        } else if let number = Int(literal) {
            value = .int(number)
        } else if literal == "true" || literal == "false" {
            value = .bool(literal == "true")
        } else {
            throw .invalidQuery(text, reason: "'\(literal)' is not a value; expected 'text', a whole number, true or false")
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

    /// True when `lhs` comes before `rhs` in this query's result order.
    func precedes(_ lhs: Document, _ rhs: Document) -> Bool {
        if let orderBy {
            let left = lhs[orderBy], right = rhs[orderBy]
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
