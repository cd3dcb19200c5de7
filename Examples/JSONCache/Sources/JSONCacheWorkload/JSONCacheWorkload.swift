import JSONCache
import WorkloadKit

/// A reader browsing articles of a JSON API through the app's response cache.
///
/// `browse` opens articles never seen before (every one a miss: fetched, cached, decoded);
/// `revisit` goes back through the most recently opened ones, newest first (hits while the cache
/// still holds them). What the cache holds at its top is computable from the parameters:
/// `keep-forever` holds every response (`browse.count * responseSize` bytes of JSON), `lru-budget`
/// at most `cacheBudget` bytes of them (`cacheBudget / responseSize` whole responses).
public struct JSONCacheWorkload: Workload {
    public init() {}

    /// The strategies, as `makeCase` understands them.
    public enum Strategy: String, Sendable, CaseIterable {
        case keepForever = "keep-forever"
        case lruBudget = "lru-budget"
    }

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "json-cache",
            summary: "Articles from a JSON API read through a response cache: every response kept, or a byte budget.",
            strategies: [
                StrategyDescriptor(
                    Strategy.keepForever.rawValue,
                    "Every response's JSON stays in a dictionary for the life of the app."),
                StrategyDescriptor(
                    Strategy.lruBudget.rawValue,
                    "Responses' JSON kept up to `cacheBudget` bytes; the least recently used is dropped first."),
            ],
            parameters: [
                .bytes(
                    "responseSize", default: 16 << 10, range: ArticleBackend.minimumResponseSize...(1 << 20),
                    "Size of every API response (the JSON a cache keeps)."),
                .bytes(
                    "cacheBudget", default: 4 << 20, range: 0...(1 << 30),
                    "Response bytes `lru-budget` keeps at most; `keep-forever` ignores it."),
            ],
            steps: [
                StepDescriptor(
                    "browse", "Open articles never opened before, one after the other (each a miss).",
                    arguments: [.count("count", default: 1000, range: 0...1_000_000, "Articles opened.")]),
                StepDescriptor(
                    "revisit", "Go back through the most recently opened articles, newest first.",
                    arguments: [.count("count", default: 300, range: 0...1_000_000, "Articles reopened.")]),
            ],
            gauges: [
                GaugeDescriptor("cachedResponses", "Responses the cache holds."),
                GaugeDescriptor("cachedBytes", "Bytes of the responses the cache holds."),
            ],
            metrics: [
                MetricDescriptor("requests", .count, "Articles requested over the case."),
                MetricDescriptor("hitRate", .ratio, "Share of requests answered from the cache."),
                MetricDescriptor("evictions", .count, "Responses dropped to stay within the budget."),
                MetricDescriptor("peakCachedResponses", .count, "Most responses held at once."),
                MetricDescriptor("peakCachedBytes", .bytes, "Most response bytes held at once (JSON bytes)."),
            ],
            defaultSteps: ["browse", "revisit"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
    {
        guard let known = Strategy(rawValue: strategy) else {
            throw JSONCacheWorkloadError.unknownStrategy(strategy, expected: Strategy.allCases.map(\.rawValue))
        }
        return JSONCacheCase(strategy: known, parameters: parameters, context: context)
    }
}

/// What `JSONCacheWorkload` cannot run.
public enum JSONCacheWorkloadError: Error, CustomStringConvertible {
    case unknownStrategy(String, expected: [String])
    /// The client answered with another article than the one asked for (a cache keyed wrongly).
    case wrongArticle(requested: Int, received: Int)

    public var description: String {
        switch self {
        case .unknownStrategy(let name, let expected):
            return "unknown strategy '\(name)'; expected one of: \(expected.joined(separator: ", "))"
        case .wrongArticle(let requested, let received):
            return "asked for article \(requested), got article \(received): the cache answered for the wrong path"
        }
    }
}
