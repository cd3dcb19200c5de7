import DocumentStore
import WorkloadKit

#if !os(Linux)
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

/// A live query whose result is written to faster than the app processes it, observed the seed's
/// four ways and one misuse.
///
/// Models seed 000: a collection of documents with a payload each, a live query on
/// `store_id == 'abc123'` matching `matchingShare` of them, and bursts of updates to matching
/// documents at `writeRate`. Every callback receives its own deep copy of the matching documents;
/// the strategies differ in how many callbacks (copies) can wait for the consumer at once.
/// `deliver-on-dispatch` is the trap the seed warns about: the CONVENIENT variant
/// (`observeLocal(deliverOn:)`, which signals next when the callback returns) with the work
/// dispatched onward anyway, which makes it as unbounded as the BAD example.
public struct LiveQueryWorkload: Workload {
    /// The strategies, as scenario files name them.
    public enum Strategy: String, CaseIterable, Sendable {
        /// `observeLocal` + `processingQueue.async { process(documents) }` (the seed's BAD example).
        case unboundedDispatch = "unbounded-dispatch"
        /// `observeLocalWithNextSignal` + async processing that calls `signalNext()` when done (BETTER).
        case signalNext = "signal-next"
        /// `observeLocal(deliverOn: processingQueue)` with all work inside the callback (CONVENIENT).
        case deliverOn = "deliver-on"
        /// `observeLocalWithNextSignal(deliverOn: liveQueryQueue)` + async processing that calls `signalNext()`
        /// (VERSATILE).
        case signalNextDeliverOn = "signal-next-deliver-on"
        /// `observeLocal(deliverOn: liveQueryQueue)` + `processingQueue.async { process(documents) }`: the
        /// seed's "IMPORTANT: all work needs to be performed within this block" broken; as unbounded as BAD.
        case deliverOnDispatch = "deliver-on-dispatch"
    }

    /// The consumer's work per callback, as scenario files name it.
    public enum WorkKind: String, CaseIterable, Sendable {
        /// The consumer thread sleeps (waiting on I/O or the UI): throughput is exact whatever the machine's load.
        case sleep
        /// The consumer thread spins on the CPU for the duration (competes with the writer for cores).
        case cpu
    }

    /// The predicate of the live query; `matchingShare` of the documents satisfy it.
    public static let predicate = Predicate("store_id", equals: .string("abc123"))

    public init() {}

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "live-query",
            summary:
                "A live query updated faster than the app processes it: unbounded dispatch (and deliverOn: then "
                + "dispatch) vs signal-next back-pressure.",
            strategies: Self.strategyDescriptors,
            parameters: Self.parameterSpecs,
            steps: Self.stepDescriptors,
            gauges: Self.gaugeDescriptors,
            metrics: Self.metricDescriptors,
            defaultSteps: ["subscribe", "burst", "drain", "cancel", "settle"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
    {
        guard let strategy = Strategy(rawValue: strategy) else {
            throw LiveQueryError.unknownStrategy(strategy)
        }
        return LiveQueryCase(strategy: strategy, configuration: LiveQueryConfiguration(parameters))
    }
}

/// The workload's parameters, read once.
struct LiveQueryConfiguration: Sendable {
    var documents: Int
    var matchingShare: Double
    var payloadSize: Int
    var writeRate: Double
    var consumerWork: Duration
    var consumerWorkKind: LiveQueryWorkload.WorkKind

    init(_ parameters: ParameterValues) {
        documents = parameters.count("documents")
        matchingShare = parameters.fraction("matchingShare")
        payloadSize = parameters.bytes("payloadSize")
        writeRate = parameters.rate("writeRate")
        consumerWork = parameters.duration("consumerWork")
        consumerWorkKind = LiveQueryWorkload.WorkKind(rawValue: parameters.choice("consumerWorkKind")) ?? .sleep
    }

    /// Documents the predicate matches: the share of the collection, rounded.
    var matchingDocuments: Int { Int((Double(documents) * matchingShare).rounded()) }
}

/// Why a live-query case could not run.
enum LiveQueryError: Error, CustomStringConvertible {
    case unknownStrategy(String)
    case nothingMatches(documents: Int, share: Double)
    case notSetUp(step: String)
    case unknownStep(String)

    var description: String {
        switch self {
        case .unknownStrategy(let name):
            return
                "unknown live-query strategy '\(name)'; expected one of: "
                + "\(LiveQueryWorkload.Strategy.allCases.map(\.rawValue).joined(separator: ", "))"
        case .nothingMatches(let documents, let share):
            return
                "matchingShare \(share * 100)% of \(documents) documents matches no document; raise matchingShare "
                + "or documents"
        case .notSetUp(let step):
            return "step '\(step)' ran before setUp made the store"
        case .unknownStep(let step):
            return "unknown live-query step '\(step)'; expected one of: subscribe, burst, drain, cancel"
        }
    }
}

extension LiveQueryWorkload {
    /// The strategies, as `memharness list` and reports describe them.
    static let strategyDescriptors: [StrategyDescriptor] = [
        StrategyDescriptor(
            Strategy.unboundedDispatch.rawValue,
            "observeLocal, then processingQueue.async { process(documents) }: every callback's copy waits in the queue."
        ),
        StrategyDescriptor(
            Strategy.signalNext.rawValue,
            "observeLocalWithNextSignal, async processing, signalNext() when done: later writes coalesce."),
        StrategyDescriptor(
            Strategy.deliverOn.rawValue,
            "observeLocal(deliverOn: processingQueue), all work inside the callback (signalNext is implicit)."),
        StrategyDescriptor(
            Strategy.signalNextDeliverOn.rawValue,
            "observeLocalWithNextSignal(deliverOn: liveQueryQueue), async processing that calls signalNext()."),
        StrategyDescriptor(
            Strategy.deliverOnDispatch.rawValue,
            "The trap: observeLocal(deliverOn: liveQueryQueue), then processingQueue.async { process(documents) }: "
                + "next is signalled when the callback returns, so every copy waits in the queue."),
    ]

    /// The parameters a scenario file may set, with their defaults and ranges.
    static let parameterSpecs: [ParameterSpec] = [
        .count("documents", default: 1000, range: 1...1_000_000, "Documents in the collection."),
        .fraction(
            "matchingShare", default: 0.25,
            "Share of the documents the live query (store_id == 'abc123') matches; each callback copies them all."
        ),
        .bytes("payloadSize", default: 8192, range: 0...(16 << 20), "Payload bytes of every document."),
        .rate(
            "writeRate", default: 250, range: 0.1...100_000,
            "Updates per second during a burst, each to one matching document (round robin)."),
        .duration(
            "consumerWork", default: .milliseconds(10), range: .zero ... .seconds(10),
            "Time the consumer spends per callback; one consumer, so it processes at most 1/consumerWork callbacks "
                + "a second."
        ),
        .choice(
            "consumerWorkKind", WorkKind.allCases.map(\.rawValue), default: WorkKind.sleep.rawValue,
            "How the consumer spends consumerWork: sleep (blocked, like waiting on I/O or the UI) or cpu (spinning)."
        ),
    ]

    /// The steps a scenario's script may use, with their arguments.
    static let stepDescriptors: [StepDescriptor] = [
        StepDescriptor(
            "subscribe", "Start the live query the strategy's way; the initial callback is delivered."),
        StepDescriptor(
            "burst", "Update matching documents at writeRate for a while.",
            arguments: [
                .duration(
                    "duration", default: .seconds(2), range: .zero ... .seconds(600), "How long to write.")
            ]),
        StepDescriptor(
            "drain",
            "Wait until the app has processed a result that reflects the last write and no callback is pending.",
            arguments: [
                .duration(
                    "limit", default: .seconds(30), range: .zero ... .seconds(3600),
                    "Give up waiting after this long (writes never processed show in writesUnprocessed).")
            ]),
        StepDescriptor("cancel", "Stop the live query; work already dispatched still runs."),
    ]

    /// The gauges sampled beside the allocator's figures.
    static let gaugeDescriptors: [GaugeDescriptor] = [
        GaugeDescriptor(
            "pendingCallbacks",
            "Callbacks whose documents wait for or are in the consumer (each holds its own copy)."),
        GaugeDescriptor("callbacksDelivered", "Handler calls so far."),
        GaugeDescriptor("writesCoalesced", "Writes so far not delivered in a callback of their own."),
        GaugeDescriptor(
            "documentsCopied", "Documents handed to callbacks so far (every callback gets its own copy)."),
    ]

    /// The metrics a case reports when it ends.
    static let metricDescriptors: [MetricDescriptor] = [
        MetricDescriptor("callbacksDelivered", .count, "Handler calls, the initial one included."),
        MetricDescriptor("writesApplied", .count, "Writes applied to matching documents."),
        MetricDescriptor("writesCoalesced", .count, "Writes not delivered in a callback of their own."),
        MetricDescriptor("documentsCopied", .count, "Documents deep-copied into callbacks."),
        MetricDescriptor("maxPendingCallbacks", .count, "Most callbacks waiting for the consumer at once."),
        MetricDescriptor(
            "stalenessP50", .milliseconds,
            "Median time from a write to the consumer processing a result that reflects it."),
        MetricDescriptor("stalenessP99", .milliseconds, "99th percentile of that staleness."),
        MetricDescriptor("stalenessMax", .milliseconds, "Largest staleness."),
        MetricDescriptor("writesUnprocessed", .count, "Writes the consumer never processed a result for."),
    ]
}
