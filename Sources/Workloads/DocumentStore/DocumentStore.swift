import Dispatch
import Synchronization

#if !os(Linux)
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

/// An in-memory document store with collections, queries, live queries and store observers.
///
/// It models the data layer of the mobile SDK the seeds describe, as far as memory is concerned:
/// writes notify observers, and every result handed to the app is its own deep copy of the
/// matching documents (value semantics), so the app decides how many copies stay alive.
///
/// The store's `mainQueue` stands in for `DispatchQueue.main`: on Linux the main queue only runs
/// when the main thread parks in `dispatchMain()` or a run loop, and a harness case's thread runs
/// the script's steps instead. The conveniences that deliver on "main" deliver on this serial queue.
public final class DocumentStore: Sendable {
    /// The serial queue used where the modelled SDK delivers on the main queue.
    public let mainQueue: DispatchQueue
    let state = Mutex(StoreState())
    /// Query-result items holding a materialized document.
    let materializations = MaterializationCounter()

    /// Makes an empty store; `mainQueue` defaults to a serial queue of its own.
    public init(mainQueue: DispatchQueue? = nil) {
        self.mainQueue = mainQueue ?? DispatchQueue(label: "memharness.document-store.main")
    }

    /// The collection called `name` (made on first write).
    public func collection(_ name: String) -> DocumentCollection {
        DocumentCollection(store: self, name: name)
    }

    /// Runs `body` on collection `name` under the store's lock and notifies the collection's
    /// listeners afterwards (outside the lock) when `body` reports a change.
    ///
    /// `body` must not call back into the store: the lock is not recursive.
    func write<Result: Sendable>(_ name: String, _ body: (inout CollectionState) -> (Result, changed: Bool)) -> Result {
        let (result, listeners) = state.withLock { state -> (Result, [any StoreListener]) in
            let (result, changed) = body(&state.collections[name, default: CollectionState()])
            guard changed, let collection = state.collections[name] else { return (result, []) }
            return (result, Array(collection.listeners.values))
        }
        for listener in listeners { listener.storeDidChange() }
        return result
    }

    /// The documents matching `query` in result order, sharing storage with the store (no copy yet).
    func evaluate(_ query: Query) -> [Document] {
        var matching = state.withLock { state -> [Document] in
            guard let collection = state.collections[query.collection] else { return [] }
            var matching: [Document] = []
            for document in collection.documents.values where query.predicate?.matches(document) ?? true {
                matching.append(document)
            }
            return matching
        }
        matching.sort(by: query.precedes)
        return matching
    }

    /// Registers `listener` for writes to `collection`; returns the id that removes it.
    func addListener(_ listener: any StoreListener, collection: String) -> UInt64 {
        state.withLock { state in
            state.nextListenerID += 1
            state.collections[collection, default: CollectionState()].listeners[state.nextListenerID] = listener
            return state.nextListenerID
        }
    }

    /// Removes a listener registered with `addListener`.
    func removeListener(_ id: UInt64, collection: String) {
        // The removed listener is returned and dropped after the lock is released: its deinit may release documents.
        _ = state.withLock { state in
            state.collections[collection]?.listeners.removeValue(forKey: id)
        }
    }
}

/// Something the store tells about every write to a collection (live queries, store observers).
protocol StoreListener: AnyObject, Sendable {
    /// Called after a write to the collection, on the writing thread, outside the store's lock.
    func storeDidChange()
}

/// The store's state behind its lock.
struct StoreState {
    var collections: [String: CollectionState] = [:]
    var nextListenerID: UInt64 = 0
}

/// One collection's documents, write counter and listeners.
struct CollectionState {
    var documents: [String: Document] = [:]
    /// Writes applied so far; the revision of the last write.
    var writeSequence: UInt64 = 0
    var listeners: [UInt64: any StoreListener] = [:]

    /// Stores `document` with the next revision.
    mutating func put(_ document: Document) {
        writeSequence += 1
        var document = document
        document.revision = writeSequence
        document.valueDigest = document.computeValueDigest()
        documents[document.id] = document
    }
}

/// A handle on one collection of a store: writes, one-shot queries, and the query builder.
public struct DocumentCollection: Sendable {
    /// The store the collection belongs to.
    public let store: DocumentStore
    /// The collection's name.
    public let name: String

    /// Inserts `document`; throws when a document with its `_id` exists.
    public func insert(_ document: Document) throws(StoreError) {
        let inserted = store.write(name) { collection -> (Bool, changed: Bool) in
            guard collection.documents[document.id] == nil else { return (false, false) }
            collection.put(document)
            return (true, true)
        }
        guard inserted else { throw .duplicateID(collection: name, id: document.id) }
    }

    /// Inserts `document`, or replaces the document with its `_id`.
    public func upsert(_ document: Document) {
        store.write(name) { collection -> ((), changed: Bool) in
            collection.put(document)
            return ((), true)
        }
    }

    /// Changes the document `id` in place; every call is a write (it bumps the revision), also
    /// one that leaves the value as it was. Throws when there is no such document.
    ///
    /// `change` runs under the store's lock: it must not call into the store.
    public func update(_ id: String, _ change: (inout Document) -> Void) throws(StoreError) {
        let found = store.write(name) { collection -> (Bool, changed: Bool) in
            // Take the document out so `change` mutates the only reference (no copy of its payload).
            guard var document = collection.documents.removeValue(forKey: id) else { return (false, false) }
            change(&document)
            // `change` cannot alter `id`, so the document goes back under the same key.
            collection.put(document)
            return (true, true)
        }
        guard found else { throw .missingDocument(collection: name, id: id) }
    }

    /// Removes the document `id`; returns false when there was none.
    @discardableResult
    public func remove(_ id: String) -> Bool {
        store.write(name) { collection -> (Bool, changed: Bool) in
            guard collection.documents.removeValue(forKey: id) != nil else { return (false, false) }
            collection.writeSequence += 1
            return (true, true)
        }
    }

    /// A copy of the document `id`, if any.
    public func document(_ id: String) -> Document? {
        store.state.withLock { $0.collections[name]?.documents[id] }?.deepCopy()
    }

    /// Number of documents in the collection.
    public var count: Int {
        store.state.withLock { $0.collections[name]?.documents.count ?? 0 }
    }

    /// Writes applied to the collection so far (inserts, updates, removals).
    public var writeSequence: UInt64 {
        store.state.withLock { $0.collections[name]?.writeSequence ?? 0 }
    }

    /// Documents matching `predicate`, written `field == value`, e.g. `store_id == 'abc123'`.
    public func find(_ predicate: String) throws(StoreError) -> PendingQuery {
        find(try Predicate(parsing: predicate))
    }

    /// Documents matching `predicate`.
    public func find(_ predicate: Predicate) -> PendingQuery {
        PendingQuery(store: store, query: Query(collection: name, predicate: predicate))
    }
}

/// A query not yet run: sort it, run it once with `exec()`, or observe it live.
public struct PendingQuery: Sendable {
    /// The store queried.
    public let store: DocumentStore
    /// What is selected.
    public var query: Query

    /// The same query sorted by `field` (then by `_id`).
    public func sort(_ field: String, ascending: Bool = true) -> PendingQuery {
        var sorted = self
        sorted.query.orderBy = field
        sorted.query.ascending = ascending
        return sorted
    }

    /// The matching documents now, each a deep copy.
    public func exec() -> [Document] {
        store.evaluate(query).map { $0.deepCopy() }
    }
}

/// Why the store refused a request.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A query string that cannot be read.
    case invalidQuery(String, reason: String)
    /// An insert of an `_id` that exists.
    case duplicateID(collection: String, id: String)
    /// An update of an `_id` that does not exist.
    case missingDocument(collection: String, id: String)

    public var description: String {
        switch self {
        case .invalidQuery(let text, let reason):
            return "query '\(text)': \(reason)"
        case .duplicateID(let collection, let id):
            return "collection '\(collection)' already has a document with _id '\(id)'; use upsert to replace it"
        case .missingDocument(let collection, let id):
            return "collection '\(collection)' has no document with _id '\(id)'; insert it first"
        }
    }
}
