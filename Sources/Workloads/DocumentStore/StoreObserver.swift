import Dispatch
import Synchronization

/// The result of a query as a store observer delivers it: cursor-like items.
///
/// Holding a result holds its items; holding an item holds its document's data as the store had
/// it, and once the item is materialized, its own deep copy of the document as well.
public final class QueryResult: Sendable {
    /// The matching documents in result order, not yet materialized.
    public let items: [QueryResultItem]

    init(documents: [Document], counter: MaterializationCounter) {
        items = documents.map { QueryResultItem(stored: $0, counter: counter) }
    }
}

/// One item of a `QueryResult`: materializes its document on first access to `value` and keeps it
/// until `dematerialize()`; treat it like a database cursor (extract what you need, dematerialize).
public final class QueryResultItem: Sendable {
    /// The store's version of the document: shares the store's storage, copies nothing.
    let stored: Document
    private let materialized = Mutex<Document?>(nil)
    private let counter: MaterializationCounter

    init(stored: Document, counter: MaterializationCounter) {
        self.stored = stored
        self.counter = counter
    }

    deinit {
        if materialized.withLock({ $0 != nil }) { counter.dematerialized() }
    }

    /// The document, materialized (deep-copied) on first access and held until `dematerialize()`.
    public var value: Document {
        materialized.withLock { document in
            if let document { return document }
            let copy = stored.deepCopy()
            document = copy
            counter.materialized()
            return copy
        }
    }

    /// True while the item holds a materialized document.
    public var isMaterialized: Bool { materialized.withLock { $0 != nil } }

    /// Materializes the document now (what `value` does on first access).
    public func materialize() {
        _ = value
    }

    /// Releases the materialized document; `value` materializes it again if asked.
    public func dematerialize() {
        let released = materialized.withLock { document -> Document? in
            defer { document = nil }
            return document
        }
        if released != nil { counter.dematerialized() }
    }
}

/// Counts the query-result items of a store that hold a materialized document.
final class MaterializationCounter: Sendable {
    private let live = Atomic<Int>(0)
    private let peak = Atomic<Int>(0)
    private let total = Atomic<Int>(0)

    func materialized() {
        let now = live.add(1, ordering: .relaxed).newValue
        peak.max(now, ordering: .relaxed)
        total.add(1, ordering: .relaxed)
    }

    func dematerialized() {
        live.subtract(1, ordering: .relaxed)
    }

    /// Items holding a materialized document now.
    var current: Int { live.load(ordering: .relaxed) }
    /// The most items that held a materialized document at once.
    var highWater: Int { peak.load(ordering: .relaxed) }
    /// Materializations so far.
    var cumulative: Int { total.load(ordering: .relaxed) }
}

/// A registered store observer; it stops on `cancel()` or when the last reference to it goes away.
public final class StoreObserver: Sendable {
    let core: ObservationCore<StoreObserverDelivery>

    init(core: ObservationCore<StoreObserverDelivery>) {
        self.core = core
    }

    deinit {
        core.stop()
    }

    /// Stops callbacks (one already running finishes).
    public func cancel() {
        core.stop()
    }

    /// True once cancelled.
    public var isCancelled: Bool { core.isStopped }

    /// Handler calls made so far.
    public var callbacksDelivered: Int { core.callbacksDelivered }
}

extension DocumentStore {
    /// Calls `handler` on `queue` (default: the store's `mainQueue`) with the result of `query` now
    /// and after changes; the next callback comes only after `handler` returns.
    ///
    /// Equivalent to, and implemented as, the `handlerWithSignalNext` variant with `signalNext()`
    /// called right after `handler`. `query` is read by `Query(parsing:)`, e.g. `SELECT * FROM cars`.
    /// No diff is computed: use a `Differ` when one is needed.
    public func registerObserver(
        query: String, deliverOn queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (QueryResult) -> Void
    ) throws(StoreError) -> StoreObserver {
        try registerObserver(query: query, deliverOn: queue) { result, signalNext in
            handler(result)
            signalNext()
        }
    }

    /// Calls `handler` on `queue` (default: the store's `mainQueue`) with the result of `query` now,
    /// and again after changes once the app calls the `SignalNext` it was given: the signal-next
    /// contract of live queries (at most one callback after it, with the latest result, only if changed).
    public func registerObserver(
        query: String, deliverOn queue: DispatchQueue? = nil,
        handlerWithSignalNext handler: @escaping @Sendable (QueryResult, @escaping SignalNext) -> Void
    )
        throws(StoreError) -> StoreObserver
    {
        let parsed = try Query(parsing: query)
        let core = ObservationCore(
            store: self, query: parsed, queue: queue ?? mainQueue,
            delivery: StoreObserverDelivery(handler: handler, counter: materializations))
        core.start()
        return StoreObserver(core: core)
    }

    /// Query-result items of this store holding a materialized document now.
    public var materializedItemCount: Int { materializations.current }

    /// The most query-result items of this store that held a materialized document at once.
    public var peakMaterializedItemCount: Int { materializations.highWater }

    /// Query-result items of this store materialized so far.
    public var itemsMaterializedTotal: Int { materializations.cumulative }
}

/// Builds store-observer callbacks: a `QueryResult` over the store's versions, nothing retained.
final class StoreObserverDelivery: ObservationDelivery {
    typealias Handler = @Sendable (QueryResult, @escaping SignalNext) -> Void

    let handler: Handler
    let counter: MaterializationCounter

    init(handler: @escaping Handler, counter: MaterializationCounter) {
        self.handler = handler
        self.counter = counter
    }

    func prepare(_ result: [Document], previous: Void?) -> (
        callback: @Sendable (@escaping SignalNext) -> Void, retained: Void
    ) {
        let queryResult = QueryResult(documents: result, counter: counter)
        let handler = handler
        return ({ signalNext in handler(queryResult, signalNext) }, ())
    }
}
