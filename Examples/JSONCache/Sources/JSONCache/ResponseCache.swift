import Foundation

/// Where the app keeps API responses it has already fetched, keyed by request path.
///
/// Caches keep the raw JSON (`Data`), not decoded articles: raw bytes are what a cache can count,
/// and decoding again on a hit is cheap next to a network round trip.
public protocol ResponseCache: AnyObject {
    /// The response stored for `path`, if any; a hit counts as a use.
    func response(for path: String) -> Data?
    /// Stores `response` for `path`, replacing an earlier one.
    func store(_ response: Data, for path: String)
    /// Drops every response.
    func removeAll()
    /// Responses held now.
    var count: Int { get }
    /// Bytes of the responses held now (their `count`s; the allocator rounds each up to a size class).
    var totalBytes: Int { get }
    /// Responses dropped to stay within a limit so far.
    var evictions: Int { get }
}

/// Keeps every response for the life of the app: the cache most apps start with.
public final class UnboundedResponseCache: ResponseCache {
    private var responses: [String: Data] = [:]
    public private(set) var totalBytes = 0
    public var count: Int { responses.count }
    public var evictions: Int { 0 }

    public init() {}

    public func response(for path: String) -> Data? { responses[path] }

    public func store(_ response: Data, for path: String) {
        totalBytes += response.count - (responses.updateValue(response, forKey: path)?.count ?? 0)
    }

    public func removeAll() {
        responses = [:]
        totalBytes = 0
    }
}
