import Dispatch
import DocumentStore
import Synchronization

/// A store with three matching documents (`a1`...`a3`, `store_id == 'abc123'`) and two others (`b1`, `b2`).
struct Fixture {
    static let matching = Predicate("store_id", equals: .string("abc123"))
    static let queueName = DispatchSpecificKey<String>()

    let store: DocumentStore
    let cars: DocumentCollection

    init(payloadSize: Int = 64) throws {
        store = DocumentStore()
        store.mainQueue.setSpecific(key: Self.queueName, value: "store-main")
        cars = store.collection("cars")
        for (index, id) in ["a1", "a2", "a3"].enumerated() {
            try cars.insert(
                Document(
                    id: id, fields: ["store_id": .string("abc123"), "seq": .int(0), "rank": .int(index)],
                    payload: Document.payload(size: payloadSize, fill: UInt8(index))))
        }
        for id in ["b1", "b2"] {
            try cars.insert(
                Document(
                    id: id, fields: ["store_id": .string("other"), "seq": .int(0)],
                    payload: Document.payload(size: payloadSize, fill: 9)))
        }
    }

    /// The live query's pending query.
    var query: PendingQuery { cars.find(Self.matching) }

    /// Sets `seq` of document `id`.
    func write(_ id: String, seq: Int) throws {
        try cars.update(id) { $0.fields["seq"] = .int(seq) }
    }

    /// A serial queue that knows its own name (read back in handlers with `currentQueueName`).
    static func queue(_ name: String) -> DispatchQueue {
        let queue = DispatchQueue(label: name)
        queue.setSpecific(key: queueName, value: name)
        return queue
    }

    /// The name of the queue the caller runs on, when it was made by `queue(_:)` or is the store's main queue.
    static var currentQueueName: String? { DispatchQueue.getSpecific(key: queueName) }
}

/// What one callback received.
struct Delivery: Sendable {
    var ids: [String]
    var seqs: [Int]
    var revisions: [UInt64]
    var event: LiveQueryEvent
    var documents: [Document]
    var queue: String?
    var signalNext: SignalNext

    /// The part two equivalent live queries must agree on.
    var observable: [String] {
        ["initial=\(event.isInitial)"] + zip(ids, seqs).map { "\($0)@\($1)" }
    }
}

/// Every callback of a live query, in order.
final class DeliveryLog: Sendable {
    private let deliveries = Mutex<[Delivery]>([])

    func record(_ documents: [Document], _ event: LiveQueryEvent, _ signalNext: @escaping SignalNext = {}) {
        let delivery = Delivery(
            ids: documents.map(\.id),
            seqs: documents.map { if case .int(let seq)? = $0["seq"] { return seq } else { return -1 } },
            revisions: documents.map(\.revision), event: event, documents: documents,
            queue: Fixture.currentQueueName, signalNext: signalNext
        )
        deliveries.withLock { $0.append(delivery) }
    }

    var count: Int { deliveries.withLock { $0.count } }
    var all: [Delivery] { deliveries.withLock { $0 } }
    subscript(index: Int) -> Delivery { deliveries.withLock { $0[index] } }
    var last: Delivery? { deliveries.withLock { $0.last } }
}

extension DispatchQueue {
    /// Waits until everything queued so far has run.
    func flush() { sync {} }

    /// Keeps the queue busy until the returned semaphore is signalled.
    func block() -> DispatchSemaphore {
        let gate = DispatchSemaphore(value: 0)
        async { gate.wait() }
        return gate
    }
}
