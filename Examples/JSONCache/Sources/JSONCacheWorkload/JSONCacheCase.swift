import JSONCache
import WorkloadKit

/// One case: an API client and its cache, built in `setUp` and dropped in `tearDown`.
final class JSONCacheCase: WorkloadCase {
    private let strategy: JSONCacheWorkload.Strategy
    private let backend: ArticleBackend
    private let cacheBudget: Int
    private let cachedResponses: Gauge
    private let cachedBytes: Gauge

    private var client: ArticleClient?
    /// Ids opened so far, oldest first; `revisit` walks back from the end.
    private var opened: [Int] = []
    private var nextId = 0
    private var peakCachedResponses = 0
    private var peakCachedBytes = 0
    // Kept after teardown for `metrics()`.
    private var requests = 0
    private var hits = 0
    private var evictions = 0

    init(strategy: JSONCacheWorkload.Strategy, parameters: ParameterValues, context: CaseContext) {
        self.strategy = strategy
        backend = ArticleBackend(responseSize: parameters.bytes("responseSize"))
        cacheBudget = parameters.bytes("cacheBudget")
        cachedResponses = context.gauge("cachedResponses")
        cachedBytes = context.gauge("cachedBytes")
    }

    func setUp(context: CaseContext) throws {
        let cache: any ResponseCache
        switch strategy {
        case .keepForever: cache = UnboundedResponseCache()
        case .lruBudget: cache = LRUResponseCache(byteLimit: cacheBudget)
        }
        let client = ArticleClient(backend: backend, cache: cache)
        // Both must be gone once the case ends: a survivor is reported as a leak.
        context.track(cache, as: "ResponseCache")
        context.track(client, as: "ArticleClient")
        self.client = client
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        guard let client else { return }
        let count = step.arguments.count("count")
        switch step.name {
        case "browse":
            opened.reserveCapacity(opened.count + count)
            for _ in 0..<count {
                try open(nextId, with: client)
                opened.append(nextId)
                nextId += 1
            }
        case "revisit":
            for id in opened.suffix(count).reversed() { try open(id, with: client) }
        default:
            break
        }
    }

    func tearDown(context: CaseContext) throws {
        if let client {
            hits = client.hits
            evictions = client.cache.evictions
        }
        client = nil
        opened = []
        cachedResponses.set(0)
        cachedBytes.set(0)
    }

    func metrics() -> [Metric] {
        [
            Metric(name: "requests", value: Double(requests), unit: .count),
            Metric(name: "hitRate", value: requests == 0 ? 0 : Double(hits) / Double(requests), unit: .ratio),
            Metric(name: "evictions", value: Double(evictions), unit: .count),
            Metric(name: "peakCachedResponses", value: Double(peakCachedResponses), unit: .count),
            Metric(name: "peakCachedBytes", value: Double(peakCachedBytes), unit: .bytes),
        ]
    }

    /// Opens article `id` as a screen would: the decoded article is shown, then dropped.
    private func open(_ id: Int, with client: ArticleClient) throws {
        let article = try client.article(id: id)
        guard article.id == id else { throw JSONCacheWorkloadError.wrongArticle(requested: id, received: article.id) }
        requests += 1
        let cache = client.cache
        peakCachedResponses = max(peakCachedResponses, cache.count)
        peakCachedBytes = max(peakCachedBytes, cache.totalBytes)
        cachedResponses.set(Int64(cache.count))
        cachedBytes.set(Int64(cache.totalBytes))
    }
}
