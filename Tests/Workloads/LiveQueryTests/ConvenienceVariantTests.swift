import Dispatch
import DocumentStore
import Testing

/// The three conveniences behave as the seed says they are implemented: as
/// `observeLocalWithNextSignal(deliverOn:)` on the main queue (here the store's `mainQueue`) or the
/// given queue, with `signalNext()` right after the handler.
@Suite(.timeLimit(.minutes(2))) struct ConvenienceVariantTests {
    enum Variant: String, CaseIterable, CustomTestStringConvertible {
        case observeLocal, observeLocalDeliverOn, observeLocalWithNextSignal
        var testDescription: String { rawValue }
    }

    /// Subscribes, then writes while the delivery queue is blocked, then once more; returns every callback.
    ///
    /// Deterministic: after the initial callback nothing is owed, so the first write is evaluated
    /// and queued at once (behind the block); the next two only mark the query dirty, and the
    /// `signalNext()` after the first callback delivers them together.
    private func runScript(queue: DispatchQueue, fixture: Fixture, subscribe: (DeliveryLog) -> LiveQuery) throws
        -> [Delivery]
    {
        let log = DeliveryLog()
        let liveQuery = subscribe(log)
        defer { liveQuery.stop() }
        queue.flush()
        let gate = queue.block()
        try fixture.write("a1", seq: 1)
        try fixture.write("a2", seq: 2)
        try fixture.write("a3", seq: 3)
        gate.signal()
        queue.flush()
        queue.flush()
        try fixture.write("a1", seq: 4)
        queue.flush()
        return log.all
    }

    private static let expected = [
        ["initial=true", "a1@0", "a2@0", "a3@0"],
        ["initial=false", "a1@1", "a2@0", "a3@0"],
        ["initial=false", "a1@1", "a2@2", "a3@3"],
        ["initial=false", "a1@4", "a2@2", "a3@3"],
    ]

    @Test(arguments: Variant.allCases)
    func behavesAsTheSignalNextVariantItIsDefinedAs(_ variant: Variant) throws {
        let convenience = try Fixture()
        let processing = Fixture.queue("processing")
        let queue = variant == .observeLocalDeliverOn ? processing : convenience.store.mainQueue
        let viaConvenience = try runScript(queue: queue, fixture: convenience) { log in
            switch variant {
            case .observeLocal:
                return convenience.query.observeLocal { log.record($0, $1) }
            case .observeLocalDeliverOn:
                return convenience.query.observeLocal(deliverOn: processing) { log.record($0, $1) }
            case .observeLocalWithNextSignal:
                return convenience.query.observeLocalWithNextSignal { documents, event, signalNext in
                    log.record(documents, event, signalNext)
                    signalNext()
                }
            }
        }

        // The seed's expansion: the versatile variant on the same kind of queue, signalNext() after the work.
        let expansion = try Fixture()
        let expansionQueue = variant == .observeLocalDeliverOn ? processing : expansion.store.mainQueue
        let viaExpansion = try runScript(queue: expansionQueue, fixture: expansion) { log in
            expansion.query.observeLocalWithNextSignal(deliverOn: expansionQueue) { documents, event, signalNext in
                log.record(documents, event, signalNext)
                signalNext()
            }
        }

        #expect(viaConvenience.map(\.observable) == Self.expected)
        #expect(viaExpansion.map(\.observable) == Self.expected)
        let expectedQueue = variant == .observeLocalDeliverOn ? "processing" : "store-main"
        #expect(viaConvenience.allSatisfy { $0.queue == expectedQueue })
        #expect(viaExpansion.allSatisfy { $0.queue == expectedQueue })
    }

    @Test func observeLocalWithNextSignalWithoutAQueueDeliversOnMainAndWaitsForTheSignal() throws {
        let fixture = try Fixture()
        let log = DeliveryLog()
        let liveQuery = fixture.query.observeLocalWithNextSignal { log.record($0, $1, $2) }
        defer { liveQuery.stop() }
        fixture.store.mainQueue.flush()
        try fixture.write("a2", seq: 1)
        fixture.store.mainQueue.flush()
        #expect(log.count == 1)
        #expect(log[0].queue == "store-main")

        log[0].signalNext()
        fixture.store.mainQueue.flush()
        #expect(log.count == 2)
        #expect(log[1].seqs == [0, 1, 0])
    }
}
