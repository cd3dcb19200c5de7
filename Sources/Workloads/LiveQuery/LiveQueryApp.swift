import Dispatch
import DocumentStore
import Synchronization
import WorkloadKit

/// The app under study: how it observes the live query, its queues, and its one consumer.
///
/// The consumer reads each callback's documents (the `seq` field tells which writes the result
/// reflects), spends `consumerWork` on them, and records how stale the result was.
final class LiveQueryApp: Sendable {
    let strategy: LiveQueryWorkload.Strategy
    let configuration: LiveQueryConfiguration
    /// The app's `documentProcessingQueue` of the seed: serial, one consumer.
    let processingQueue = DispatchQueue(label: "memharness.live-query.processing")
    /// The app's `liveQueryQueue` of the seed's VERSATILE example: where callbacks are delivered.
    let liveQueryQueue = DispatchQueue(label: "memharness.live-query.delivery")
    let staleness: StalenessLog
    private let context: CaseContext
    private let pendingGauge: Gauge
    private let callbacksGauge: Gauge
    private let coalescedGauge: Gauge
    private let copiedGauge: Gauge
    private let pending = Atomic<Int>(0)
    private let maxPending = Atomic<Int>(0)
    private let discarding = Atomic<Bool>(false)

    init(strategy: LiveQueryWorkload.Strategy, configuration: LiveQueryConfiguration, context: CaseContext) {
        self.strategy = strategy
        self.configuration = configuration
        self.context = context
        staleness = StalenessLog()
        pendingGauge = context.gauge("pendingCallbacks")
        callbacksGauge = context.gauge("callbacksDelivered")
        coalescedGauge = context.gauge("writesCoalesced")
        copiedGauge = context.gauge("documentsCopied")
    }

    /// Starts observing `query` the way the strategy does.
    func subscribe(_ query: PendingQuery) -> LiveQuery {
        switch strategy {
        case .unboundedDispatch:
            // BAD: the callback returns at once (so the next one comes at once); each dispatched
            // work item holds its own copy of the documents until the consumer gets to it.
            return query.observeLocal { [self] documents, event in
                received(documents, event)
                processingQueue.async { self.process(documents) }
            }
        case .signalNext:
            // BETTER: no further callback until the consumer is done and calls signalNext().
            return query.observeLocalWithNextSignal { [self] documents, event, signalNext in
                received(documents, event)
                processingQueue.async {
                    self.process(documents)
                    signalNext()
                }
            }
        case .deliverOn:
            // CONVENIENT: all work inside the callback, on the processing queue; signalNext is implicit.
            return query.observeLocal(deliverOn: processingQueue) { [self] documents, event in
                received(documents, event)
                process(documents)
            }
        case .deliverOnDispatch:
            // THE TRAP: observeLocal(deliverOn:) calls signalNext() itself as soon as the callback
            // returns, which the seed says is only safe when all work happens inside it. Dispatching
            // the documents onward returns at once: every callback's copy waits in the queue, as
            // with unbounded-dispatch, although delivery is on a queue of the app's.
            return query.observeLocal(deliverOn: liveQueryQueue) { [self] documents, event in
                received(documents, event)
                processingQueue.async { self.process(documents) }
            }
        case .signalNextDeliverOn:
            // VERSATILE: delivered on a queue of the app's, processed asynchronously, signalled when done.
            return query.observeLocalWithNextSignal(deliverOn: liveQueryQueue) { [self] documents, event, signalNext in
                received(documents, event)
                processingQueue.async {
                    self.process(documents)
                    signalNext()
                }
            }
        }
    }

    /// Counts a write made by the case (it is coalesced until a callback of its own delivers it).
    func noteWrite() {
        coalescedGauge.increment()
    }

    /// Callbacks handed to the app whose documents are not processed yet.
    var pendingCallbacks: Int { pending.load(ordering: .relaxed) }

    /// The most callbacks that were pending at once.
    var maxPendingCallbacks: Int { maxPending.load(ordering: .relaxed) }

    /// From now on queued work items drop their documents without the consumer's work (teardown).
    func discardPendingWork() {
        discarding.store(true, ordering: .relaxed)
    }

    private func received(_ documents: [Document], _ event: LiveQueryEvent) {
        callbacksGauge.increment()
        copiedGauge.add(Int64(documents.count))
        if !event.isInitial { coalescedGauge.decrement() }
        pendingGauge.increment()
        let now = pending.add(1, ordering: .relaxed).newValue
        maxPending.max(now, ordering: .relaxed)
    }

    private func process(_ documents: [Document]) {
        defer {
            pending.subtract(1, ordering: .relaxed)
            pendingGauge.decrement()
        }
        guard !discarding.load(ordering: .relaxed) else { return }
        var newestWrite = 0
        for document in documents {
            if case .int(let sequence)? = document["seq"], sequence > newestWrite { newestWrite = sequence }
        }
        switch configuration.consumerWorkKind {
        case .sleep:
            Pacer.sleep(for: configuration.consumerWork)
        case .cpu:
            let deadline = ContinuousClock.now + configuration.consumerWork
            while ContinuousClock.now < deadline {}
        }
        staleness.recordProcessed(through: newestWrite, atNanoseconds: context.elapsedNanoseconds)
    }
}

/// When each write was made, and how long after it the consumer finished a result reflecting it.
final class StalenessLog: Sendable {
    private struct State {
        /// `writeTimes[n - 1]`: when write `n` was made, nanoseconds on the case clock.
        var writeTimes: [Int64] = []
        /// One latency per processed write, nanoseconds.
        var latencies: [Int64] = []
        /// The newest write reflected in a processed result.
        var processedThrough = 0
    }

    private let state = Mutex(State())

    /// Reserves room for `writes` more writes, so a burst's bookkeeping does not reallocate mid-burst.
    func reserve(writes: Int) {
        state.withLock { state in
            state.writeTimes.reserveCapacity(state.writeTimes.count + writes)
            state.latencies.reserveCapacity(state.writeTimes.count + writes)
        }
    }

    /// Records a write about to be made; returns its sequence number (from 1).
    func recordWrite(atNanoseconds time: Int64) -> Int {
        state.withLock { state in
            state.writeTimes.append(time)
            return state.writeTimes.count
        }
    }

    /// Records that a result reflecting every write up to `sequence` finished processing at `time`.
    func recordProcessed(through sequence: Int, atNanoseconds time: Int64) {
        state.withLock { state in
            guard sequence > state.processedThrough else { return }
            for write in (state.processedThrough + 1)...sequence {
                state.latencies.append(time - state.writeTimes[write - 1])
            }
            state.processedThrough = sequence
        }
    }

    /// The newest write reflected in a processed result (0 before any).
    var processedThrough: Int { state.withLock { $0.processedThrough } }

    /// Write-to-processed latencies so far, nanoseconds, in write order.
    var latencies: [Int64] { state.withLock { $0.latencies } }
}
