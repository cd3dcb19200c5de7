import DocumentStore
import Synchronization
import WorkloadKit

/// The app under study: how it observes the query and what it keeps between callbacks.
///
/// Every strategy does the seed's work: it learns the `_id`s of the inserted, updated and deleted
/// documents of each callback. Callbacks run on the store's main queue, one at a time.
final class StoreObserverApp: Sendable {
    /// What the app keeps between callbacks and has counted so far.
    struct State {
        /// `retain-items`: the previous result's items, materialized.
        var previousItems: [QueryResultItem] = []
        /// `extract-ids-dematerialize`: the previous result's `_id`s.
        var previousIDs: [String] = []
        var insertionsReported = 0
        var deletionsReported = 0
        var updatesReported = 0
        var movesReported = 0
        /// Duration of every Differ call, nanoseconds.
        var diffNanoseconds: [Int64] = []
    }

    let strategy: StoreObserverWorkload.Strategy
    let state = Mutex(State())
    private let differ = Differ()
    private let materializedGauge: Gauge
    private let retainedGauge: Gauge
    private let diffGauge: Gauge

    init(strategy: StoreObserverWorkload.Strategy, context: CaseContext) {
        self.strategy = strategy
        materializedGauge = context.gauge("itemsMaterialized")
        retainedGauge = context.gauge("itemsRetained")
        diffGauge = context.gauge("diffMicroseconds")
    }

    /// Starts observing the way the strategy does; returns the handle that keeps the observation alive.
    func subscribe(_ store: DocumentStore) throws -> Subscription {
        switch strategy {
        case .legacyLiveQuery:
            let query = try store.collection(StoreObserverWorkload.collection).find(StoreObserverWorkload.predicate)
                .sort("rank")
            return .liveQuery(
                query.observeLocal { [self] documents, event in
                    legacyCallback(documents, event)
                })
        case .retainItems, .extractIDsDematerialize, .noDiff:
            return .observer(
                try store.registerObserver(query: StoreObserverWorkload.query) { [self] result in
                    materializedGauge.set(Int64(store.materializedItemCount))
                    switch strategy {
                    case .retainItems: retainItemsCallback(result)
                    case .extractIDsDematerialize: extractIDsCallback(result)
                    default: noDiffCallback(result)
                    }
                    materializedGauge.set(Int64(store.materializedItemCount))
                })
        }
    }

    /// The seed's "before": the legacy live query's event, deletions read from `event.oldDocuments`.
    private func legacyCallback(_ documents: [Document], _ event: LiveQueryEvent) {
        state.withLock { state in
            if !event.isInitial {
                state.insertionsReported += event.insertions.map { documents[$0].id }.count
                state.updatesReported += event.updates.map { documents[$0].id }.count
                state.deletionsReported += event.deletions.map { event.oldDocuments[$0].id }.count
                state.movesReported += event.moves.count
            }
        }
        // The live query keeps these documents until the next callback, for its `oldDocuments`.
        retainedGauge.set(Int64(documents.count))
    }

    /// The seed's warning case: `previousItems = result.items`, every item left materialized.
    private func retainItemsCallback(_ result: QueryResult) {
        let diff = timedDiff(result.items)
        let currentIDs = result.items.map { $0.value.id }
        state.withLock { state in
            report(
                diff, currentIDs: currentIDs, deletedIDs: diff.deletions.map { state.previousItems[$0].value.id },
                into: &state)
            retainedGauge.set(Int64(state.previousItems.count + result.items.count))
            state.previousItems = result.items
        }
        retainedGauge.set(Int64(result.items.count))
    }

    /// The seed's "after": extract the `_id`, dematerialize, keep only the IDs.
    private func extractIDsCallback(_ result: QueryResult) {
        let diff = timedDiff(result.items)
        let currentIDs = result.items.map { item in
            let id = item.value.id
            item.dematerialize()
            return id
        }
        state.withLock { state in
            report(diff, currentIDs: currentIDs, deletedIDs: diff.deletions.map { state.previousIDs[$0] }, into: &state)
            state.previousIDs = currentIDs
        }
        retainedGauge.set(0)
    }

    /// The floor: the same extraction, no diff, nothing kept.
    private func noDiffCallback(_ result: QueryResult) {
        for item in result.items {
            _ = item.value.id
            item.dematerialize()
        }
        retainedGauge.set(0)
    }

    private func timedDiff(_ items: [QueryResultItem]) -> ChangeSet {
        let start = ContinuousClock.now
        let diff = differ.diff(items)
        let nanoseconds = (ContinuousClock.now - start).nanoseconds
        diffGauge.set(nanoseconds / 1000)
        state.withLock { $0.diffNanoseconds.append(nanoseconds) }
        return diff
    }

    /// Counts what the callback learned; the first diff (everything inserted) is the initial load, not a change.
    private func report(_ diff: ChangeSet, currentIDs: [String], deletedIDs: [String], into state: inout State) {
        guard state.diffNanoseconds.count > 1 else { return }
        state.insertionsReported += diff.insertions.map { currentIDs[$0] }.count
        state.updatesReported += diff.updates.map { currentIDs[$0] }.count
        state.deletionsReported += deletedIDs.count
        state.movesReported += diff.moves.count
    }

    /// Releases what the app keeps between callbacks.
    func releaseKeptResults() {
        let released = state.withLock { state -> [QueryResultItem] in
            defer {
                state.previousItems = []
                state.previousIDs = []
            }
            return state.previousItems
        }
        _ = released  // dropped here, outside the lock
        retainedGauge.set(0)
    }
}

/// The handle that keeps an observation alive.
enum Subscription {
    case liveQuery(LiveQuery)
    case observer(StoreObserver)

    func stop() {
        switch self {
        case .liveQuery(let liveQuery): liveQuery.stop()
        case .observer(let observer): observer.cancel()
        }
    }

    var callbacksDelivered: Int {
        switch self {
        case .liveQuery(let liveQuery): return liveQuery.statistics.callbacksDelivered
        case .observer(let observer): return observer.callbacksDelivered
        }
    }

    /// Documents copied for the app: the live query's deep copies (observers' materializations are counted by the
    /// store).
    var documentsCopied: Int? {
        if case .liveQuery(let liveQuery) = self { return liveQuery.statistics.documentsCopied }
        return nil
    }
}
