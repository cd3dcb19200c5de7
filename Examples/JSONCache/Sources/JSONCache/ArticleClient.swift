import Foundation

/// The app's API client: serves an article from the cache when it can, else fetches it and caches
/// the response; decodes the JSON on every request, as the screen that asked needs a model.
public final class ArticleClient {
    public let backend: ArticleBackend
    public let cache: any ResponseCache
    /// Requests answered from the cache so far.
    public private(set) var hits = 0
    /// Requests that went to the backend so far.
    public private(set) var misses = 0

    private let decoder = JSONDecoder()

    public init(backend: ArticleBackend, cache: any ResponseCache) {
        self.backend = backend
        self.cache = cache
    }

    /// Article `id`, from the cache or the backend.
    public func article(id: Int) throws -> Article {
        let path = ArticleBackend.path(ofArticle: id)
        let response: Data
        if let cached = cache.response(for: path) {
            hits += 1
            response = cached
        } else {
            misses += 1
            response = backend.response(forArticle: id)
            cache.store(response, for: path)
        }
        return try decoder.decode(Article.self, from: response)
    }
}
