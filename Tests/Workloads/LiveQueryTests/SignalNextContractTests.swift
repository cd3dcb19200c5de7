import Dispatch
import DocumentStore
import Testing

/// The signal-next contract of `observeLocalWithNextSignal(deliverOn:)`, driven synchronously:
/// writes run on the test thread, callbacks on a serial queue the test flushes. No test waits on a clock.
@Suite(.timeLimit(.minutes(2))) struct SignalNextContractTests {
    /// A live query on a fresh fixture delivering on its own serial queue, its initial callback delivered:
    /// `observeLocalWithNextSignal(deliverOn:)`, or `observeLocal(deliverOn:)` when `implicitSignal`.
    private func observe(
        payloadSize: Int = 64, sortedBy field: String? = nil,
        implicitSignal: Bool = false
    ) throws -> (Fixture, DispatchQueue, DeliveryLog, LiveQuery) {
        let fixture = try Fixture(payloadSize: payloadSize)
        let queue = Fixture.queue("delivery")
        let log = DeliveryLog()
        let query = field.map { fixture.query.sort($0) } ?? fixture.query
        let liveQuery =
            implicitSignal
            ? query.observeLocal(deliverOn: queue) { log.record($0, $1) }
            : query.observeLocalWithNextSignal(deliverOn: queue) { log.record($0, $1, $2) }
        queue.flush()
        return (fixture, queue, log, liveQuery)
    }

    @Test func noCallbackBeforeSignalNextWhileWritesKeepBeingApplied() throws {
        let (fixture, queue, log, liveQuery) = try observe()
        defer { liveQuery.stop() }
        #expect(log.count == 1)
        #expect(log[0].event.isInitial)
        #expect(log[0].ids == ["a1", "a2", "a3"])

        for seq in 1...5 {
            try fixture.write(["a1", "a2", "a3"][seq % 3], seq: seq)
            queue.flush()
        }
        #expect(log.count == 1)
        // The writes only marked the query dirty: it was not even run again.
        #expect(liveQuery.statistics.evaluations == 1)
    }

    @Test func signalNextDeliversExactlyOneCallbackWithTheLatestResult() throws {
        let (fixture, queue, log, liveQuery) = try observe()
        defer { liveQuery.stop() }
        try fixture.write("a1", seq: 1)
        try fixture.write("a2", seq: 2)
        try fixture.write("a1", seq: 3)

        log[0].signalNext()
        queue.flush()
        queue.flush()
        #expect(log.count == 2)
        let latest = try #require(log.last)
        #expect(latest.ids == ["a1", "a2", "a3"])
        #expect(latest.seqs == [3, 2, 0])
        #expect(latest.revisions == fixture.query.exec().map(\.revision))
        #expect(!latest.event.isInitial)
        #expect(liveQuery.statistics.callbacksDelivered == 2)
    }

    @Test func noCallbackWhenTheResultIsUnchanged() throws {
        let (fixture, queue, log, liveQuery) = try observe()
        defer { liveQuery.stop() }
        // A write outside the result makes the query dirty without changing what it selects.
        try fixture.write("b1", seq: 7)
        log[0].signalNext()
        queue.flush()
        #expect(log.count == 1)
        #expect(liveQuery.statistics.evaluations == 2, "signalNext with a write pending runs the query again")

        // Nothing is owed now, so the next change is delivered without another signal.
        try fixture.write("a3", seq: 8)
        queue.flush()
        #expect(log.count == 2)
        #expect(log[1].seqs == [0, 0, 8])
    }

    @Test func signalNextWithNothingWrittenWaitsForTheNextWrite() throws {
        let (fixture, queue, log, liveQuery) = try observe()
        defer { liveQuery.stop() }
        log[0].signalNext()
        queue.flush()
        #expect(log.count == 1)
        #expect(liveQuery.statistics.evaluations == 1)

        try fixture.write("a2", seq: 1)
        queue.flush()
        #expect(log.count == 2)
        #expect(log[1].seqs == [0, 1, 0])
    }

    @Test func aRepeatedOrStaleSignalNextDoesNothing() throws {
        let (fixture, queue, log, liveQuery) = try observe()
        defer { liveQuery.stop() }
        try fixture.write("a1", seq: 1)
        log[0].signalNext()
        queue.flush()
        #expect(log.count == 2)

        try fixture.write("a1", seq: 2)
        log[0].signalNext()  // stale: belongs to the first callback
        queue.flush()
        #expect(log.count == 2)

        log[1].signalNext()
        log[1].signalNext()  // repeated: honoured once
        queue.flush()
        #expect(log.count == 3)
        try fixture.write("a1", seq: 3)
        log[1].signalNext()
        queue.flush()
        #expect(log.count == 3)
        #expect(log[2].seqs == [2, 0, 0])
    }

    @Test func everyCallbackHoldsItsOwnCopyOfThePayloads() throws {
        let (fixture, queue, log, liveQuery) = try observe(payloadSize: 4096, implicitSignal: true)
        defer { liveQuery.stop() }
        try fixture.write("b1", seq: 1)  // changes nothing the query selects
        try fixture.write("a1", seq: 1)
        queue.flush()
        #expect(log.count == 2)
        // Same payload bytes, different buffers: no copy-on-write sharing between callbacks.
        for index in 0..<3 {
            let first = log[0].documents[index].payload
            let second = log[1].documents[index].payload
            #expect(first == second)
            let firstAddress = first.withUnsafeBufferPointer { $0.baseAddress }
            let secondAddress = second.withUnsafeBufferPointer { $0.baseAddress }
            #expect(firstAddress != secondAddress)
        }
        #expect(liveQuery.statistics.documentsCopied == 6)
    }

    @Test func eventsIndexTheNewListForInsertionsAndUpdatesAndTheOldListForDeletions() throws {
        let (fixture, queue, log, liveQuery) = try observe()
        defer { liveQuery.stop() }
        #expect(fixture.cars.remove("a1"))
        try fixture.write("a3", seq: 1)
        try fixture.cars.insert(Document(id: "a0", fields: ["store_id": .string("abc123")]))
        log[0].signalNext()
        queue.flush()

        let delivery = try #require(log.last)
        #expect(delivery.ids == ["a0", "a2", "a3"])
        #expect(delivery.event.insertions == [0])
        #expect(delivery.event.deletions == [0])
        #expect(delivery.event.updates == [2])
        #expect(delivery.event.moves.isEmpty)
        #expect(delivery.event.oldDocuments.map(\.id) == ["a1", "a2", "a3"])
    }

    @Test func aDocumentWhoseSortKeyChangesIsMovedAndUpdated() throws {
        let (fixture, queue, log, liveQuery) = try observe(sortedBy: "rank")
        defer { liveQuery.stop() }
        try fixture.cars.update("a3") { $0.fields["rank"] = .int(-1) }
        log[0].signalNext()
        queue.flush()

        let delivery = try #require(log.last)
        #expect(delivery.ids == ["a3", "a1", "a2"])
        #expect(delivery.event.moves == [Move(from: 2, to: 0)])
        #expect(delivery.event.updates == [0])
        #expect(delivery.event.insertions.isEmpty && delivery.event.deletions.isEmpty)
    }

    @Test func aWriteOfTheSameValueIsAnUpdateForTheLegacyLiveQuery() throws {
        let (fixture, queue, log, liveQuery) = try observe(implicitSignal: true)
        defer { liveQuery.stop() }
        try fixture.write("a2", seq: 0)  // the value it already had
        queue.flush()
        #expect(log.count == 2)
        #expect(log[1].event.updates == [1])
    }

    @Test func stopEndsCallbacksAndSoDoesReleasingTheLiveQuery() throws {
        let fixture = try Fixture()
        let queue = Fixture.queue("delivery")
        let log = DeliveryLog()
        let stopped = fixture.query.observeLocal(deliverOn: queue) { log.record($0, $1) }
        queue.flush()
        try fixture.write("a1", seq: 1)
        queue.flush()
        #expect(log.count == 2, "the live query delivers before it is stopped")
        stopped.stop()
        try fixture.write("a1", seq: 2)
        queue.flush()
        #expect(log.count == 2)

        let released = DeliveryLog()
        do {
            let liveQuery = fixture.query.observeLocal(deliverOn: queue) { released.record($0, $1) }
            queue.flush()
            #expect(released.count == 1)
            withExtendedLifetime(liveQuery) {}
        }
        try fixture.write("a1", seq: 3)
        queue.flush()
        #expect(released.count == 1)
    }

    @Test func aCallbackAlreadyQueuedWhenTheQueryStopsIsDropped() throws {
        let fixture = try Fixture()
        let queue = Fixture.queue("delivery")
        let log = DeliveryLog()
        let gate = queue.block()
        let liveQuery = fixture.query.observeLocal(deliverOn: queue) { log.record($0, $1) }
        liveQuery.stop()
        gate.signal()
        queue.flush()
        #expect(log.count == 0)
        #expect(liveQuery.statistics.documentsCopied == 3, "the initial result was copied and queued before the stop")
    }
}
