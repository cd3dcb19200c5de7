import AllocatorProbe
import Dispatch
import DocumentStore
import Synchronization
import Testing
import WorkloadKit

@Suite(.serialized, .timeLimit(.minutes(2))) struct QueryResultTests {
    private static func store(documents: Int, payloadSize: Int) throws -> DocumentStore {
        let store = DocumentStore()
        let cars = store.collection("cars")
        for index in 0..<documents {
            try cars.insert(
                Document(
                    id: "car\(index)",
                    fields: ["rank": .int(index), "store_id": .string(index % 2 == 0 ? "abc123" : "x")],
                    payload: Document.payload(size: payloadSize, fill: 7)))
        }
        return store
    }

    private static func firstResult(of store: DocumentStore, _ query: String) throws -> QueryResult? {
        let queue = DispatchQueue(label: "query-result-tests")
        let latest = LatestResult()
        let observer = try store.registerObserver(query: query, deliverOn: queue) { result, signalNext in
            latest.set(result, signalNext)
        }
        queue.sync {}
        observer.cancel()
        return latest.result
    }

    @Test func anItemMaterializesOnAccessAndHoldsItsCopyUntilDematerialized() throws {
        let store = try Self.store(documents: 3, payloadSize: 16)
        let items = try #require(try Self.firstResult(of: store, "SELECT * FROM cars ORDER BY rank")).items
        #expect(items.allSatisfy { !$0.isMaterialized })
        #expect(store.materializedItemCount == 0)

        let first = items[0].value
        let again = items[0].value
        #expect(items[0].isMaterialized)
        #expect(store.materializedItemCount == 1)
        // The same materialized copy while it is held, not a new one per access.
        #expect(
            first.payload.withUnsafeBufferPointer { $0.baseAddress }
                == again.payload.withUnsafeBufferPointer { $0.baseAddress })
        #expect(store.itemsMaterializedTotal == 1)

        items[0].dematerialize()
        #expect(!items[0].isMaterialized)
        #expect(store.materializedItemCount == 0)
        _ = items[0].value
        #expect(store.itemsMaterializedTotal == 2, "accessing it again materializes it again")
    }

    @Test func releasingAMaterializedItemReleasesItsCount() throws {
        let store = try Self.store(documents: 4, payloadSize: 16)
        do {
            let result = try #require(try Self.firstResult(of: store, "SELECT * FROM cars"))
            for item in result.items { item.materialize() }
            #expect(store.materializedItemCount == 4)
        }
        #expect(store.materializedItemCount == 0)
        #expect(store.peakMaterializedItemCount == 4)
    }

    @Test func materializedItemsHoldTheirOwnCopiesAndUnmaterializedOnesAlmostNothing() throws {
        let probe = try JemallocProbe()
        // Payloads above the thread-cache limit (32 KiB), so allocated bytes follow the frees at once.
        let payloadSize = 64 << 10
        let store = try Self.store(documents: 40, payloadSize: payloadSize)
        let copyBytes = AllocatorCost.bytes(forRequest: payloadSize)
        probe.flushThreadCache()
        let before = probe.allocatedBytes()
        let result = try #require(try Self.firstResult(of: store, "SELECT * FROM cars WHERE store_id == 'abc123'"))
        #expect(result.items.count == 20)
        probe.flushThreadCache()
        let unmaterialized = probe.allocatedBytes() - before

        for item in result.items { item.materialize() }
        probe.flushThreadCache()
        let materialized = probe.allocatedBytes() - before
        #expect(materialized - unmaterialized >= 20 * copyBytes, "the probe sees the materialized copies")
        #expect(unmaterialized < copyBytes, "an unmaterialized result shares the store's data")

        for item in result.items { item.dematerialize() }
        probe.flushThreadCache()
        #expect(probe.allocatedBytes() - before < copyBytes)
    }

    @Test func anObserverWithASignalWaitsForIt() throws {
        let store = try Self.store(documents: 2, payloadSize: 0)
        let queue = DispatchQueue(label: "signal")
        let latest = LatestResult()
        let count = CallCounter()
        let observer = try store.registerObserver(query: "SELECT * FROM cars", deliverOn: queue) { result, signalNext in
            count.increment()
            latest.set(result, signalNext)
        }
        defer { observer.cancel() }
        queue.sync {}
        try store.collection("cars").update("car0") { $0.fields["rank"] = .int(9) }
        queue.sync {}
        #expect(count.value == 1)
        latest.signalNext?()
        queue.sync {}
        #expect(count.value == 2)
        #expect(latest.result?.items.map(\.value.id) == ["car0", "car1"])
    }

    @Test func anObserverWithoutASignalIsCalledAfterEveryChange() throws {
        let store = try Self.store(documents: 2, payloadSize: 0)
        let queue = DispatchQueue(label: "implicit")
        let count = CallCounter()
        let observer = try store.registerObserver(query: "SELECT * FROM cars ORDER BY rank DESC", deliverOn: queue) {
            _ in count.increment()
        }
        defer { observer.cancel() }
        queue.sync {}
        try store.collection("cars").update("car0") { $0.fields["rank"] = .int(9) }
        queue.sync {}
        try store.collection("cars").update("car1") { $0.fields["rank"] = .int(10) }
        queue.sync {}
        #expect(count.value == 3)
        #expect(observer.callbacksDelivered == 3)
        observer.cancel()
        #expect(observer.isCancelled)
    }
}

@Suite struct QueryParsingTests {
    @Test func readsTheSubsetOfTheQueryLanguage() throws {
        let query = try Query(parsing: "select * from cars where store_id == 'abc 123' order by rank desc")
        #expect(
            query
                == Query(
                    collection: "cars", predicate: Predicate("store_id", equals: .string("abc 123")), orderBy: "rank",
                    ascending: false))
        #expect(try Query(parsing: "SELECT * FROM cars") == Query(collection: "cars"))
        #expect(
            try Query(parsing: "SELECT * FROM cars ORDER BY rank ASC") == Query(collection: "cars", orderBy: "rank"))
        #expect(try Query(parsing: "SELECT * FROM cars WHERE n == 3").predicate == Predicate("n", equals: .int(3)))
    }

    @Test(arguments: [
        ("SELECT name FROM cars", "a query starts with SELECT * FROM"),
        ("SELECT * FROM", "no collection after FROM"),
        ("SELECT * FROM cars WHERE", "no condition after WHERE"),
        ("SELECT * FROM cars WHERE store_id = 'x'", "expected FIELD == VALUE"),
        ("SELECT * FROM cars ORDER BY", "no field after ORDER BY"),
        ("SELECT * FROM cars LIMIT 3", "unexpected 'LIMIT'"),
        ("SELECT * FROM cars WHERE 1x == 2", "'1x' is not a field name"),
    ])
    func refusesWhatItCannotReadSayingWhy(_ text: String, _ reason: String) {
        #expect {
            try Query(parsing: text)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }
}

/// Counts calls from any thread.
final class CallCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
