import DocumentStore
import WorkloadKit

/// One case of the store-observer workload: the store, the app, and the write script.
final class StoreObserverCase: WorkloadCase {
    let strategy: StoreObserverWorkload.Strategy
    let configuration: StoreObserverConfiguration
    private var store: DocumentStore?
    private var app: StoreObserverApp?
    private var subscription: Subscription?
    /// `_id`s of the documents in the collection, for picking write targets.
    private var liveIDs: [String] = []
    private var nextIndex = 0
    /// The same write script for every strategy and repetition, so they compare like for like.
    private var random = SeededRandom(seed: 0x5EED_0002)
    private var writesApplied = 0
    private var callbacksDelivered = 0
    private var liveQueryCopies: Int?
    private var results: [Metric] = []

    init(strategy: StoreObserverWorkload.Strategy, configuration: StoreObserverConfiguration) {
        self.strategy = strategy
        self.configuration = configuration
    }

    /// Ranks are spread so inserted and moved documents land between existing ones.
    private var rankSpace: Int { max(configuration.documents, 1) * 10 }

    func setUp(context: CaseContext) throws {
        let store = DocumentStore()
        let collection = store.collection(StoreObserverWorkload.collection)
        liveIDs.reserveCapacity(configuration.documents)
        for _ in 0..<configuration.documents {
            try collection.insert(makeDocument(rank: nextIndex * 10))
        }
        self.store = store
        app = StoreObserverApp(strategy: strategy, context: context)
    }

    private func makeDocument(rank: Int) -> Document {
        let index = nextIndex
        nextIndex += 1
        let id = "doc-\(index)"
        liveIDs.append(id)
        let matches = Double.random(in: 0..<1, using: &random) < configuration.resultShare
        return Document(
            id: id,
            fields: [
                "store_id": .string(matches ? "abc123" : "store-\(index % 7)"),
                "rank": .int(rank),
                "counter": .int(0),
                "title": .string("Car \(index)"),
            ],
            payload: Document.payload(size: configuration.payloadSize, fill: UInt8(truncatingIfNeeded: index))
        )
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        guard let store, let app else { throw StoreObserverError.notSetUp(step: step.name) }
        switch step.name {
        case "subscribe":
            stopObserving(store)
            subscription = try app.subscribe(store)
        case "churn":
            try churn(for: step.arguments.duration("duration"), store: store)
        case "cancel":
            stopObserving(store)
        default:
            throw StoreObserverError.unknownStep(step.name)
        }
    }

    /// Writes at `writeRate`: inserts, deletes, moves, touches and updates in the configured shares.
    private func churn(for duration: Duration, store: DocumentStore) throws {
        let collection = store.collection(StoreObserverWorkload.collection)
        let pacer = Pacer(ratePerSecond: configuration.writeRate)
        for tick in 0..<pacer.ticks(in: duration) {
            pacer.wait(forTick: tick)
            var pick = Double.random(in: 0..<1, using: &random)
            if liveIDs.isEmpty || pick < configuration.insertShare {
                try collection.insert(makeDocument(rank: Int.random(in: 0..<rankSpace, using: &random)))
            } else if (pick - configuration.insertShare) < configuration.deleteShare {
                let position = Int.random(in: liveIDs.indices, using: &random)
                collection.remove(liveIDs[position])
                liveIDs.swapAt(position, liveIDs.count - 1)
                liveIDs.removeLast()
            } else {
                pick -= configuration.insertShare + configuration.deleteShare
                let id = liveIDs[Int.random(in: liveIDs.indices, using: &random)]
                if pick < configuration.moveShare {
                    let rank = Int.random(in: 0..<rankSpace, using: &random)
                    try collection.update(id) { $0.fields["rank"] = .int(rank) }
                } else if pick - configuration.moveShare < configuration.touchShare {
                    // Metadata only: the field gets the value it has.
                    try collection.update(id) { $0.fields["counter"] = $0.fields["counter"] }
                } else {
                    try collection.update(id) { document in
                        guard case .int(let counter)? = document.fields["counter"] else { return }
                        document.fields["counter"] = .int(counter + 1)
                    }
                }
            }
            writesApplied += 1
        }
    }

    /// Stops the observation and waits until a callback already queued has run.
    private func stopObserving(_ store: DocumentStore) {
        guard let subscription else { return }
        subscription.stop()
        store.mainQueue.sync {}
        callbacksDelivered += subscription.callbacksDelivered
        if let copies = subscription.documentsCopied { liveQueryCopies = (liveQueryCopies ?? 0) + copies }
        self.subscription = nil
    }

    func tearDown(context: CaseContext) throws {
        if let store, let app {
            stopObserving(store)
            app.releaseKeptResults()
            results = metrics(app: app, store: store)
        }
        app = nil
        store = nil
        liveIDs = []
    }

    func metrics() -> [Metric] { results }

    private func metrics(app: StoreObserverApp, store: DocumentStore) -> [Metric] {
        let state = app.state.withLock { $0 }
        let diffMilliseconds = state.diffNanoseconds.map { Double($0) / 1_000_000 }
        return [
            Metric(name: "callbacksDelivered", value: Double(callbacksDelivered), unit: .count),
            Metric(name: "writesApplied", value: Double(writesApplied), unit: .count),
            Metric(name: "insertionsReported", value: Double(state.insertionsReported), unit: .count),
            Metric(name: "deletionsReported", value: Double(state.deletionsReported), unit: .count),
            Metric(name: "updatesReported", value: Double(state.updatesReported), unit: .count),
            Metric(name: "movesReported", value: Double(state.movesReported), unit: .count),
            Metric(name: "diffTimeP50", value: Statistics.percentile(diffMilliseconds, 50) ?? 0, unit: .milliseconds),
            Metric(name: "diffTimeP99", value: Statistics.percentile(diffMilliseconds, 99) ?? 0, unit: .milliseconds),
            // Copies made for the app: the live query's deep copies, or the observers' materialized items.
            Metric(
                name: "documentsCopied", value: Double(liveQueryCopies ?? store.itemsMaterializedTotal), unit: .count),
            Metric(name: "maxItemsMaterialized", value: Double(store.peakMaterializedItemCount), unit: .count),
        ]
    }
}
