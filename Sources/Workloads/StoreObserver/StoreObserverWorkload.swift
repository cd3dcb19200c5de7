import DocumentStore
import WorkloadKit

#if !os(Linux)
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

/// Query results held between callbacks vs extracted and dematerialized, with the `Differ` (seed 002).
///
/// A collection of documents with a payload each is observed with
/// `SELECT * FROM cars WHERE store_id == 'abc123' ORDER BY rank` while a writer inserts, deletes,
/// moves (changes `rank`), updates and touches (rewrites a field with the value it has) documents.
/// The strategies differ in what the app keeps from one callback to the next.
public struct StoreObserverWorkload: Workload {
    /// The strategies, as scenario files name them.
    public enum Strategy: String, CaseIterable, Sendable {
        /// The legacy live query: `observeLocal` with its event, which keeps `oldDocuments` for deletions.
        case legacyLiveQuery = "legacy-live-query"
        /// Store observer + `Differ`, keeping `previousItems = result.items` (materialized) between callbacks.
        case retainItems = "retain-items"
        /// Store observer + `Differ`: extract each `_id`, dematerialize every item, keep only the IDs (the seed's
        /// pattern).
        case extractIDsDematerialize = "extract-ids-dematerialize"
        /// Store observer without diffing: extract each `_id` and dematerialize, keep nothing (the floor).
        case noDiff = "no-diff"
    }

    /// The collection observed.
    public static let collection = "cars"
    /// The condition of the observed query; `resultShare` of the documents satisfy it.
    public static let predicate = "store_id == 'abc123'"
    /// The query the store observers register (the legacy live query selects the same, sorted the same).
    public static let query = "SELECT * FROM \(collection) WHERE \(predicate) ORDER BY rank"

    public init() {}

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "store-observer",
            summary:
                "Store observer + Differ: query results retained between callbacks vs extracted and dematerialized.",
            strategies: Self.strategyDescriptors,
            parameters: Self.parameterSpecs,
            steps: Self.stepDescriptors,
            gauges: Self.gaugeDescriptors,
            metrics: Self.metricDescriptors,
            defaultSteps: ["subscribe", "churn", "cancel", "settle"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
    {
        guard let strategy = Strategy(rawValue: strategy) else {
            throw StoreObserverError.unknownStrategy(strategy)
        }
        let configuration = StoreObserverConfiguration(parameters)
        let mix =
            configuration.insertShare + configuration.deleteShare + configuration.moveShare + configuration.touchShare
        // A little slack for shares written as decimals that do not add up exactly in binary.
        guard mix <= 1 + 1e-9 else { throw StoreObserverError.mixAboveOne(mix) }
        return StoreObserverCase(strategy: strategy, configuration: configuration)
    }
}

/// The workload's parameters, read once.
struct StoreObserverConfiguration: Sendable {
    var documents: Int
    var resultShare: Double
    var payloadSize: Int
    var writeRate: Double
    var insertShare: Double
    var deleteShare: Double
    var moveShare: Double
    var touchShare: Double

    init(_ parameters: ParameterValues) {
        documents = parameters.count("documents")
        resultShare = parameters.fraction("resultShare")
        payloadSize = parameters.bytes("payloadSize")
        writeRate = parameters.rate("writeRate")
        insertShare = parameters.fraction("insertShare")
        deleteShare = parameters.fraction("deleteShare")
        moveShare = parameters.fraction("moveShare")
        touchShare = parameters.fraction("touchShare")
    }
}

/// Why a store-observer case could not run.
enum StoreObserverError: Error, CustomStringConvertible {
    case unknownStrategy(String)
    case mixAboveOne(Double)
    case notSetUp(step: String)
    case unknownStep(String)

    var description: String {
        switch self {
        case .unknownStrategy(let name):
            return
                "unknown store-observer strategy '\(name)'; expected one of: "
                + "\(StoreObserverWorkload.Strategy.allCases.map(\.rawValue).joined(separator: ", "))"
        case .mixAboveOne(let sum):
            return
                "insertShare + deleteShare + moveShare + touchShare is \(sum * 100)%; it must be at most 100% (the "
                + "rest are updates)"
        case .notSetUp(let step):
            return "step '\(step)' ran before setUp made the store"
        case .unknownStep(let step):
            return "unknown store-observer step '\(step)'; expected one of: subscribe, churn, cancel"
        }
    }
}

extension StoreObserverWorkload {
    /// The strategies, as `memharness list` and reports describe them.
    static let strategyDescriptors: [StrategyDescriptor] = [
        StrategyDescriptor(
            Strategy.legacyLiveQuery.rawValue,
            "Legacy observeLocal with its event; the live query keeps the previous documents for event.oldDocuments."
        ),
        StrategyDescriptor(
            Strategy.retainItems.rawValue,
            "registerObserver + Differ, previousItems = result.items kept materialized between callbacks."),
        StrategyDescriptor(
            Strategy.extractIDsDematerialize.rawValue,
            "registerObserver + Differ, extract _id and dematerialize every item, keep only the IDs."),
        StrategyDescriptor(
            Strategy.noDiff.rawValue,
            "registerObserver without a Differ: extract _id, dematerialize, keep nothing (the floor)."),
    ]

    /// The parameters a scenario file may set, with their defaults and ranges.
    static let parameterSpecs: [ParameterSpec] = [
        .count("documents", default: 2000, range: 1...1_000_000, "Documents in the collection at the start."),
        .fraction(
            "resultShare", default: 1.0,
            "Share of the documents (and of inserted ones) the query's store_id == 'abc123' selects."),
        .bytes("payloadSize", default: 4096, range: 0...(16 << 20), "Payload bytes of every document."),
        .rate("writeRate", default: 20, range: 0.1...100_000, "Writes per second during churn."),
        .fraction("insertShare", default: 0.1, "Share of writes that insert a document."),
        .fraction("deleteShare", default: 0.1, "Share of writes that delete a document."),
        .fraction(
            "moveShare", default: 0.1,
            "Share of writes that change a document's rank (its position in the result)."),
        .fraction(
            "touchShare", default: 0.1,
            "Share of writes that store a field's own value again (metadata only: no update for the Differ). The "
                + "rest change a field."
        ),
    ]

    /// The steps a scenario's script may use, with their arguments.
    static let stepDescriptors: [StepDescriptor] = [
        StepDescriptor("subscribe", "Start observing the strategy's way; the initial callback is delivered."),
        StepDescriptor(
            "churn", "Write at writeRate with the configured mix for a while.",
            arguments: [
                .duration(
                    "duration", default: .seconds(2), range: .zero ... .seconds(600), "How long to write.")
            ]),
        StepDescriptor("cancel", "Stop observing; a callback already queued is dropped, one running finishes."),
    ]

    /// The gauges sampled beside the allocator's figures.
    static let gaugeDescriptors: [GaugeDescriptor] = [
        GaugeDescriptor(
            "itemsMaterialized",
            "Query-result items holding a materialized document (read at the start and end of each callback)."),
        GaugeDescriptor("itemsRetained", "Documents or materialized items kept from one callback to the next."),
        GaugeDescriptor(
            "diffMicroseconds", "Time the last Differ call took, microseconds (0 where the app runs no Differ)."
        ),
    ]

    /// The metrics a case reports when it ends.
    static let metricDescriptors: [MetricDescriptor] = [
        MetricDescriptor("callbacksDelivered", .count, "Observer or live query callbacks."),
        MetricDescriptor("writesApplied", .count, "Writes applied to the store."),
        MetricDescriptor("insertionsReported", .count, "Insertions the Differ reported."),
        MetricDescriptor("deletionsReported", .count, "Deletions the Differ reported."),
        MetricDescriptor("updatesReported", .count, "Updates the Differ reported."),
        MetricDescriptor("movesReported", .count, "Moves the Differ reported."),
        MetricDescriptor("diffTimeP50", .milliseconds, "Median time of one diff."),
        MetricDescriptor("diffTimeP99", .milliseconds, "99th percentile time of one diff."),
        MetricDescriptor(
            "documentsCopied", .count,
            "Copies made for the app: the live query's deep copies, or the observers' materialized items."),
        MetricDescriptor("maxItemsMaterialized", .count, "Most items materialized at once."),
    ]
}
