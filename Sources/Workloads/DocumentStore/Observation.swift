import Dispatch
import Synchronization

/// Tells an observation that the app is done with the last callback's data and is ready for the next.
public typealias SignalNext = @Sendable () -> Void

/// What an observation hands the app: built from each new result, by the thread that delivers it.
protocol ObservationDelivery: Sendable {
    /// What the observation keeps from one callback for the next (the legacy live query: the documents).
    associatedtype Retained: Sendable

    /// Builds the callback for `result` (documents sharing the store's storage; copy what the app
    /// may keep) given what was retained from the previous callback (nil before the first).
    func prepare(_ result: [Document], previous: Retained?) -> (
        callback: @Sendable (@escaping SignalNext) -> Void, retained: Retained
    )
}

/// Identity and revision of a document in a result: what "the result differs" compares.
struct DocumentVersion: Hashable, Sendable {
    var id: String
    var revision: UInt64
}

/// The back-pressure machinery shared by live queries and store observers: evaluation on writes,
/// the signal-next contract, and delivery on the app's queue.
///
/// At most one thread at a time evaluates and delivers: the one that moved `awaitingSignal` from
/// false to true (a write, or the subscriber for the initial callback), or the one whose
/// `signalNext()` found writes pending. Everything else only marks the observation dirty.
final class ObservationCore<Delivery: ObservationDelivery>: StoreListener {
    private struct State {
        var stopped = false
        /// A callback is under way: being evaluated, queued, running, or waiting for its `signalNext()`.
        var awaitingSignal = true
        /// Writes were applied since the last evaluation began.
        var dirty = false
        /// Versions of the last delivered result; nil before the first callback.
        var versions: [DocumentVersion]?
        /// What the delivery kept from the last callback.
        var retained: Delivery.Retained?
        /// Number of the last delivered callback.
        var generation: UInt64 = 0
        /// Number of the last callback whose `signalNext()` was honoured.
        var signalledGeneration: UInt64 = 0
        var listenerID: UInt64?
    }

    let store: DocumentStore
    let query: Query
    let queue: DispatchQueue
    let delivery: Delivery
    private let state = Mutex(State())
    private let callbacks = Atomic<Int>(0)
    private let evaluations = Atomic<Int>(0)

    init(store: DocumentStore, query: Query, queue: DispatchQueue, delivery: Delivery) {
        self.store = store
        self.query = query
        self.queue = queue
        self.delivery = delivery
    }

    /// Handler calls made so far.
    var callbacksDelivered: Int { callbacks.load(ordering: .relaxed) }
    /// Times the query ran against the store so far.
    var evaluationCount: Int { evaluations.load(ordering: .relaxed) }

    /// Registers for writes, then delivers the initial result (`awaitingSignal` starts true, so
    /// writes racing with the registration only mark the observation dirty).
    func start() {
        let id = store.addListener(self, collection: query.collection)
        state.withLock { $0.listenerID = id }
        deliverLatest()
    }

    /// Ends callbacks and drops what was retained for the next one.
    func stop() {
        let (id, released) = state.withLock { state -> (UInt64?, Delivery.Retained?) in
            state.stopped = true
            defer {
                state.listenerID = nil
                state.retained = nil
                state.versions = nil
            }
            return (state.listenerID, state.retained)
        }
        if let id { store.removeListener(id, collection: query.collection) }
        _ = released  // dropped here, outside the lock
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

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
            guard !state.stopped, generation == state.generation, state.signalledGeneration < generation else {
                return false
            }
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
        case deliver(previous: Delivery.Retained?)
    }

    /// Evaluates the query and, when the result differs from the last delivered one, dispatches a
    /// callback. Called only by the thread holding `awaitingSignal`.
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
            let versions = result.map { DocumentVersion(id: $0.id, revision: $0.revision) }
            let decision = state.withLock { state -> Decision in
                guard !state.stopped else { return .idle }
                if state.versions == versions {
                    if state.dirty { return .retry }
                    state.awaitingSignal = false
                    return .idle
                }
                return .deliver(previous: state.retained)
            }
            switch decision {
            case .idle:
                return
            case .retry:
                continue
            case .deliver(let previous):
                let (callback, retained) = delivery.prepare(result, previous: previous)
                let generation = state.withLock { state -> UInt64? in
                    guard !state.stopped else { return nil }
                    state.versions = versions
                    state.retained = retained
                    state.generation += 1
                    return state.generation
                }
                guard let generation else { return }
                let signalNext: SignalNext = { [weak self] in self?.signalNext(generation) }
                queue.async {
                    guard !self.isStopped else { return }
                    self.callbacks.add(1, ordering: .relaxed)
                    callback(signalNext)
                }
                return
            }
        }
    }
}
