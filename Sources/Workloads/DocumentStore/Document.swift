/// The value of an ordinary document field.
public enum FieldValue: Sendable, Hashable, Comparable, CustomStringConvertible {
    case bool(Bool)
    case int(Int)
    case string(String)

    /// Orders values of one kind naturally, and kinds as bool < int < string (a stable order for sorting mixed fields).
    public static func < (lhs: FieldValue, rhs: FieldValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): return !a && b
        case (.int(let a), .int(let b)): return a < b
        case (.string(let a), .string(let b)): return a < b
        default: return lhs.kindRank < rhs.kindRank
        }
    }

    private var kindRank: Int {
        switch self {
        case .bool: return 0
        case .int: return 1
        case .string: return 2
        }
    }

    /// The value as a query literal: `'abc'`, `42`, `true`.
    public var description: String {
        switch self {
        case .bool(let value): return "\(value)"
        case .int(let value): return "\(value)"
        case .string(let value): return "'\(value)'"
        }
    }
}

/// A document: an `_id`, ordinary fields, a payload of bytes, and the store's write metadata.
///
/// Documents have value semantics like the modelled SDK's: every document the store hands out
/// (in a query result, a live-query callback or a materialized result item) owns its own copy of
/// the payload bytes, so holding many results holds many copies.
public struct Document: Sendable {
    /// The document's identity (`_id`).
    public let id: String
    /// Ordinary fields by name (`_id` is not among them; read it through `id` or `self["_id"]`).
    public var fields: [String: FieldValue]
    /// The document's bulk data (an attachment, a serialized blob), bytes.
    public var payload: [UInt8]
    /// Metadata: the collection's write sequence number of the last write to this document.
    ///
    /// Every write changes it, also one that stores the value the document already had; the legacy
    /// live query compares revisions (so it reports such writes as updates), the `Differ` compares values.
    public internal(set) var revision: UInt64
    /// Metadata: a digest of `fields` and `payload`, set by the store on every write (0 before).
    ///
    /// What the `Differ` compares to tell an update from a write that left the value as it was.
    /// Equal values always have equal digests; different values collide with odds of about 2^-64.
    var valueDigest: Int

    /// Makes a document; the store assigns `revision` when the document is written.
    public init(id: String, fields: [String: FieldValue] = [:], payload: [UInt8] = []) {
        self.id = id
        self.fields = fields
        self.payload = payload
        revision = 0
        valueDigest = 0
    }

    /// The digest of this document's fields and payload (`Hasher`, so stable within one process only).
    func computeValueDigest() -> Int {
        var hasher = Hasher()
        hasher.combine(fields)
        payload.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }

    /// A field by name; `"_id"` gives the identity.
    public subscript(field: String) -> FieldValue? {
        field == "_id" ? .string(id) : fields[field]
    }

    /// A copy that shares no storage with this document: new payload bytes and a new field table.
    ///
    /// Swift's own copy of a `Document` would share the payload buffer (copy-on-write), which is
    /// not what the modelled SDK does: each result it hands out is materialized separately.
    /// Field strings are copied by the dictionary rebuild only when they are not stored inline
    /// (short strings, up to 15 UTF-8 bytes, always are); the payload is what carries the weight.
    public func deepCopy() -> Document {
        var copy = Document(id: id, fields: Dictionary(minimumCapacity: fields.count), payload: Self.copyBytes(payload))
        for (name, value) in fields { copy.fields[name] = value }
        copy.revision = revision
        copy.valueDigest = valueDigest
        return copy
    }

    /// New storage holding the same bytes as `source`.
    static func copyBytes(_ source: [UInt8]) -> [UInt8] {
        source.withUnsafeBufferPointer { from in
            [UInt8](unsafeUninitializedCapacity: from.count) { to, count in
                if let source = from.baseAddress, let target = to.baseAddress {
                    target.initialize(from: source, count: from.count)
                }
                count = from.count
            }
        }
    }

    /// A payload of `size` bytes, every byte set to `fill`.
    public static func payload(size: Int, fill: UInt8) -> [UInt8] {
        [UInt8](repeating: fill, count: size)
    }
}
