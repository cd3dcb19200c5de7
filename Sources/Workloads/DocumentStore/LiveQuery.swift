import Dispatch
import Synchronization

/// What changed since the previous callback of a live query (the legacy live-query event).
///
/// The initial callback has `isInitial` set and no indexes. Later ones carry the changes against
/// the previous callback's documents, which the live query keeps for `oldDocuments` (memory the
/// legacy API costs even when the app never reads them). A write counts as an update even when it
/// left the value as it was (revisions are compared, not values).
public struct LiveQueryEvent: Sendable {
    /// True for the first callback of a live query.
    public var isInitial: Bool
    /// Index changes against the previous callback (empty for the initial one).
    public var changes: ChangeSet
    /// The previous callback's documents: what `changes.deletions` and `moves.from` index.
    public var oldDocuments: [Document]

    /// Indexes (current documents) of inserted documents.
    public var insertions: [Int] { changes.insertions }
    /// Indexes (old documents) of deleted documents.
    public var deletions: [Int] { changes.deletions }
    /// Indexes (current documents) of documents written since the previous callback.
    public var updates: [Int] { changes.updates }
    /// (old, current) index pairs of documents that changed position.
    public var moves: [Move] { changes.moves }

    init(previous: [Document]?, current: [Document]) {
        guard let previous else {
            isInitial = true
            changes = ChangeSet()
            oldDocuments = []
            return
        }
        isInitial = false
        oldDocuments = previous
        changes = ChangeSet.between(old: previous.lazy.map(\.id), new: current.lazy.map(\.id)) { oldIndex, newIndex in
            previous[oldIndex].revision != current[newIndex].revision
        }
    }
}

/// Counters of one live query, for tests and workload metrics.
public struct LiveQueryStatistics: Sendable, Hashable {
    /// Handler calls made.
    public var callbacksDelivered: Int
    /// Times the query was run against the store (one per callback, plus runs that found nothing new).
    public var evaluations: Int
    /// Documents deep-copied for callbacks.
    public var documentsCopied: Int
}

/// A running live query; it stops on `stop()` or when the last reference to it goes away.
public final class LiveQuery: Sendable {
    let core: ObservationCore<LiveQueryDelivery>

    init(core: ObservationCore<LiveQueryDelivery>) {
        self.core = core
    }

    deinit {
        core.stop()
    }

    /// Stops callbacks: none is made after this returns (one already running finishes), and the
    /// documents the live query kept for `oldDocuments` are released.
    public func stop() {
        core.stop()
    }

    /// The query's counters so far.
    public var statistics: LiveQueryStatistics {
        LiveQueryStatistics(
            callbacksDelivered: core.callbacksDelivered, evaluations: core.evaluationCount,
            documentsCopied: core.delivery.documentsCopied)
    }
}

extension PendingQuery {
    /// Calls `handler` with the matching documents now and after changes, on the store's `mainQueue`.
    ///
    /// Equivalent to, and implemented as, `observeLocalWithNextSignal(deliverOn: store.mainQueue)`
    /// with `signalNext()` called right after `handler` returns: the documents must be processed
    /// inside `handler` (dispatching them elsewhere piles up copies).
    public func observeLocal(_ handler: @escaping @Sendable ([Document], LiveQueryEvent) -> Void) -> LiveQuery {
        observeLocalWithNextSignal(deliverOn: store.mainQueue) { documents, event, signalNext in
            handler(documents, event)
            signalNext()
        }
    }

    /// Calls `handler` with the matching documents now and after changes, on `queue`.
    ///
    /// Equivalent to, and implemented as, `observeLocalWithNextSignal(deliverOn: queue)` with
    /// `signalNext()` called right after `handler` returns.
    public func observeLocal(
        deliverOn queue: DispatchQueue,
        _ handler: @escaping @Sendable ([Document], LiveQueryEvent) -> Void
    ) -> LiveQuery {
        observeLocalWithNextSignal(deliverOn: queue) { documents, event, signalNext in
            handler(documents, event)
            signalNext()
        }
    }

    /// Like `observeLocalWithNextSignal(deliverOn:)`, delivering on the store's `mainQueue`.
    public func observeLocalWithNextSignal(
        _ handler: @escaping @Sendable ([Document], LiveQueryEvent, @escaping SignalNext) -> Void
    ) -> LiveQuery {
        observeLocalWithNextSignal(deliverOn: store.mainQueue, handler)
    }

    /// Calls `handler` on `queue` with the matching documents now, and again after changes once
    /// the app calls the `SignalNext` it was given.
    ///
    /// Until `signalNext()` is called no further callback is made, however many writes are applied.
    /// After it, `handler` is called at most once: with the latest result, and only if that result
    /// differs from the one last delivered (a different list of `_id`s or revisions). Every callback
    /// receives its own deep copy of the documents. Calling a `signalNext` twice, or a stale one,
    /// does nothing.
    public func observeLocalWithNextSignal(
        deliverOn queue: DispatchQueue,
        _ handler: @escaping @Sendable ([Document], LiveQueryEvent, @escaping SignalNext) -> Void
    ) -> LiveQuery {
        let core = ObservationCore(
            store: store, query: query, queue: queue, delivery: LiveQueryDelivery(handler: handler))
        core.start()
        return LiveQuery(core: core)
    }
}

/// Builds live-query callbacks: a deep copy of the result, and the event against the previous
/// callback's documents, which it keeps for `oldDocuments`.
final class LiveQueryDelivery: ObservationDelivery {
    typealias Handler = @Sendable ([Document], LiveQueryEvent, @escaping SignalNext) -> Void

    let handler: Handler
    private let copies = Atomic<Int>(0)

    init(handler: @escaping Handler) {
        self.handler = handler
    }

    /// Documents deep-copied for callbacks so far.
    var documentsCopied: Int { copies.load(ordering: .relaxed) }

    func prepare(_ result: [Document], previous: [Document]?) -> (
        callback: @Sendable (@escaping SignalNext) -> Void, retained: [Document]
    ) {
        let documents = result.map { $0.deepCopy() }
        copies.add(documents.count, ordering: .relaxed)
        let event = LiveQueryEvent(previous: previous, current: documents)
        let handler = handler
        // The retained documents are the callback's own array (shared, not another copy).
        return ({ signalNext in handler(documents, event, signalNext) }, documents)
    }
}
