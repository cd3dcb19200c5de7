import DocumentStore
import WorkloadKit

/// One case of the live-query workload: the store, the app, and the script's steps.
final class LiveQueryCase: WorkloadCase {
    /// The collection the live query observes.
    static let collection = "A"

    let strategy: LiveQueryWorkload.Strategy
    let configuration: LiveQueryConfiguration
    private var store: DocumentStore?
    private var app: LiveQueryApp?
    private var liveQuery: LiveQuery?
    /// `_id`s of the documents the live query matches; bursts update them round robin.
    private var matchingIDs: [String] = []
    private var writesApplied = 0
    private var callbacksDelivered = 0
    private var documentsCopied = 0
    private var results: [Metric] = []

    init(strategy: LiveQueryWorkload.Strategy, configuration: LiveQueryConfiguration) {
        self.strategy = strategy
        self.configuration = configuration
    }

    /// Fills the collection: `documents` documents with a payload each; `matchingShare` of them,
    /// spread evenly, have `store_id == 'abc123'`.
    func setUp(context: CaseContext) throws {
        let matching = configuration.matchingDocuments
        guard matching > 0 else {
            throw LiveQueryError.nothingMatches(documents: configuration.documents, share: configuration.matchingShare)
        }
        let store = DocumentStore()
        let collection = store.collection(Self.collection)
        let total = configuration.documents
        matchingIDs.reserveCapacity(matching)
        for index in 0..<total {
            // Exactly `matching` indexes cross a multiple of total / matching: an even spread.
            let matches = (index + 1) * matching / total > index * matching / total
            let id = Self.documentID(index)
            if matches { matchingIDs.append(id) }
            try collection.insert(
                Document(
                    id: id,
                    fields: [
                        "store_id": .string(matches ? "abc123" : "store-\(index % 7)"),
                        "seq": .int(0),
                        "title": .string("Document \(index)"),
                    ],
                    payload: Document.payload(size: configuration.payloadSize, fill: UInt8(truncatingIfNeeded: index))
                ))
        }
        self.store = store
        app = LiveQueryApp(strategy: strategy, configuration: configuration, context: context)
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        guard let store, let app else { throw LiveQueryError.notSetUp(step: step.name) }
        switch step.name {
        case "subscribe":
            liveQuery?.stop()
            liveQuery = app.subscribe(store.collection(Self.collection).find(LiveQueryWorkload.predicate))
        case "burst":
            try burst(for: step.arguments.duration("duration"), store: store, app: app, context: context)
        case "drain":
            drain(app: app, limit: step.arguments.duration("limit"))
        case "cancel":
            stopLiveQuery()
        default:
            throw LiveQueryError.unknownStep(step.name)
        }
    }

    /// Updates matching documents round robin at `writeRate`, stamping each with its write number.
    private func burst(for duration: Duration, store: DocumentStore, app: LiveQueryApp, context: CaseContext) throws {
        let collection = store.collection(Self.collection)
        let pacer = Pacer(ratePerSecond: configuration.writeRate)
        let writes = pacer.ticks(in: duration)
        app.staleness.reserve(writes: writes)
        for tick in 0..<writes {
            pacer.wait(forTick: tick)
            let sequence = app.staleness.recordWrite(atNanoseconds: context.elapsedNanoseconds)
            try collection.update(matchingIDs[sequence % matchingIDs.count]) { document in
                document.fields["seq"] = .int(sequence)
            }
            writesApplied = sequence
            app.noteWrite()
        }
    }

    /// Waits (polling every millisecond) until the consumer has processed the last write and
    /// nothing is pending, or `limit` has passed.
    private func drain(app: LiveQueryApp, limit: Duration) {
        let deadline = ContinuousClock.now + limit
        while app.staleness.processedThrough < writesApplied || app.pendingCallbacks > 0 {
            guard ContinuousClock.now < deadline else { return }
            Pacer.sleep(for: .milliseconds(1))
        }
    }

    private func stopLiveQuery() {
        guard let liveQuery else { return }
        liveQuery.stop()
        let statistics = liveQuery.statistics
        callbacksDelivered += statistics.callbacksDelivered
        documentsCopied += statistics.documentsCopied
        self.liveQuery = nil
    }

    /// Stops the live query, drops the work still queued, waits for every queue, releases the store.
    func tearDown(context: CaseContext) throws {
        stopLiveQuery()
        if let app, let store {
            app.discardPendingWork()
            // Main first: a callback running there may still dispatch to the processing queue.
            store.mainQueue.sync {}
            app.liveQueryQueue.sync {}
            app.processingQueue.sync {}
            results = metrics(app: app)
        }
        app = nil
        store = nil
        matchingIDs = []
    }

    func metrics() -> [Metric] { results }

    private func metrics(app: LiveQueryApp) -> [Metric] {
        let latencies = app.staleness.latencies.map { Double($0) / 1_000_000 }
        let processed = latencies.count
        // Every callback after the initial one reflects at least one new write, so this is not negative.
        let coalesced = writesApplied - max(callbacksDelivered - 1, 0)
        return [
            Metric(name: "callbacksDelivered", value: Double(callbacksDelivered), unit: .count),
            Metric(name: "writesApplied", value: Double(writesApplied), unit: .count),
            Metric(name: "writesCoalesced", value: Double(coalesced), unit: .count),
            Metric(name: "documentsCopied", value: Double(documentsCopied), unit: .count),
            Metric(name: "maxPendingCallbacks", value: Double(app.maxPendingCallbacks), unit: .count),
            Metric(name: "stalenessP50", value: Statistics.percentile(latencies, 50) ?? 0, unit: .milliseconds),
            Metric(name: "stalenessP99", value: Statistics.percentile(latencies, 99) ?? 0, unit: .milliseconds),
            Metric(name: "stalenessMax", value: latencies.max() ?? 0, unit: .milliseconds),
            Metric(name: "writesUnprocessed", value: Double(writesApplied - processed), unit: .count),
        ]
    }

    /// `doc-000042`: zero-padded so `_id` order is creation order.
    static func documentID(_ index: Int) -> String {
        let digits = String(index)
        return "doc-" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }
}
