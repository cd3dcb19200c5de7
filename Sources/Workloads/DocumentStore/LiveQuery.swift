import Dispatch
import Synchronization

/// Tells a live query that the app is done with the last callback's documents and is ready for the next.
public typealias SignalNext = @Sendable () -> Void

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
        changes = ChangeSet.between(old: previous.map(\.id), new: current.map(\.id)) { oldIndex, newIndex in
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
    let core: LiveQueryCore

    init(core: LiveQueryCore) {
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
    public var statistics: LiveQueryStatistics { core.statistics }
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
    public func observeLocal(deliverOn queue: DispatchQueue,
                             _ handler: @escaping @Sendable ([Document], LiveQueryEvent) -> Void) -> LiveQuery {
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
        let core = LiveQueryCore(store: store, query: query, queue: queue, handler: handler)
        core.start()
        return LiveQuery(core: core)
    }
}

/// The machinery of a live query: the back-pressure state, evaluation and delivery.
///
/// At most one thread at a time evaluates and delivers: the one that moved `awaitingSignal` from
/// false to true (a write, or the subscriber for the initial callback), or the one whose
/// `signalNext()` found writes pending. Everything else only marks the query dirty.
final class LiveQueryCore: StoreListener {
    typealias Handler = @Sendable ([Document], LiveQueryEvent, @escaping SignalNext) -> Void

    private struct State {
        var stopped = false
        /// A callback is under way: being evaluated, queued, running, or waiting for its `signalNext()`.
        var awaitingSignal = true
        /// Writes were applied since the last evaluation began.
        var dirty = false
        /// The last delivered documents (shared with that callback, not another copy); nil before the first.
        var delivered: [Document]?
        /// Number of the last delivered callback.
        var generation: UInt64 = 0
        /// Number of the last callback whose `signalNext()` was honoured.
        var signalledGeneration: UInt64 = 0
        var listenerID: UInt64?
    }

    let store: DocumentStore
    let query: Query
    let queue: DispatchQueue
    let handler: Handler
    private let state = Mutex(State())
    private let callbacks = Atomic<Int>(0)
    private let evaluations = Atomic<Int>(0)
    private let copies = Atomic<Int>(0)

    init(store: DocumentStore, query: Query, queue: DispatchQueue, handler: @escaping Handler) {
        self.store = store
        self.query = query
        self.queue = queue
        self.handler = handler
    }

    var statistics: LiveQueryStatistics {
        LiveQueryStatistics(callbacksDelivered: callbacks.load(ordering: .relaxed),
                            evaluations: evaluations.load(ordering: .relaxed),
                            documentsCopied: copies.load(ordering: .relaxed))
    }

    /// Registers for writes, then delivers the initial result (`awaitingSignal` starts true, so
    /// writes racing with the registration only mark the query dirty).
    func start() {
        let id = store.addListener(self, collection: query.collection)
        state.withLock { $0.listenerID = id }
        deliverLatest()
    }

    func stop() {
        let (id, released) = state.withLock { state -> (UInt64?, [Document]?) in
            state.stopped = true
            defer {
                state.listenerID = nil
                state.delivered = nil
            }
            return (state.listenerID, state.delivered)
        }
        if let id { store.removeListener(id, collection: query.collection) }
        _ = released  // dropped here, outside the lock
    }

    func storeDidChange() {
        let shouldDeliver = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.dirty = true
            guard !state.awaitingSignal else { return false }
            state.awaitingSignal = true
            return true
        }
        if shouldDeliver { deliverLatest() }
    }

    private func signalNext(_ generation: UInt64) {
        let shouldDeliver = state.withLock { state -> Bool in
            guard !state.stopped, generation == state.generation, state.signalledGeneration < generation else { return false }
            state.signalledGeneration = generation
            // With writes pending this thread keeps `awaitingSignal` and delivers the latest result.
            guard state.dirty else {
                state.awaitingSignal = false
                return false
            }
            return true
        }
        if shouldDeliver { deliverLatest() }
    }

    private enum Decision {
        case idle
        case retry
        case deliver(previous: [Document]?)
    }

    /// Evaluates the query and, when the result differs from the last delivered one, dispatches a
    /// callback with a deep copy. Called only by the thread holding `awaitingSignal`.
    private func deliverLatest() {
        while true {
            let proceed = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                // Cleared before evaluating: a write racing with the evaluation sets it again.
                state.dirty = false
                return true
            }
            guard proceed else { return }
            let result = store.evaluate(query)
            evaluations.add(1, ordering: .relaxed)
            let decision = state.withLock { state -> Decision in
                guard !state.stopped else { return .idle }
                if let previous = state.delivered, Self.sameRevisions(previous, result) {
                    if state.dirty { return .retry }
                    state.awaitingSignal = false
                    return .idle
                }
                return .deliver(previous: state.delivered)
            }
            switch decision {
            case .idle:
                return
            case .retry:
                continue
            case let .deliver(previous):
                let documents = result.map { $0.deepCopy() }
                copies.add(documents.count, ordering: .relaxed)
                let event = LiveQueryEvent(previous: previous, current: documents)
                let generation = state.withLock { state -> UInt64? in
                    guard !state.stopped else { return nil }
                    state.delivered = documents
                    state.generation += 1
                    return state.generation
                }
                guard let generation else { return }
                let signalNext: SignalNext = { [weak self] in self?.signalNext(generation) }
                queue.async {
                    guard !self.isStopped else { return }
                    self.callbacks.add(1, ordering: .relaxed)
                    self.handler(documents, event, signalNext)
                }
                return
            }
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// True when both lists hold the same documents at the same revisions in the same order.
    private static func sameRevisions(_ lhs: [Document], _ rhs: [Document]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (left, right) in zip(lhs, rhs) where left.id != right.id || left.revision != right.revision {
            return false
        }
        return true
    }
}
