import Foundation
import Synchronization

/// An in-memory image cache that a cell consults before going to disk.
public protocol ImageCache: Sendable {
    /// The cached image of `post`, if any.
    func image(for post: Int) -> LoadedImage?
    /// Caches `image` at `cost` (its bytes); may evict others, or the image itself.
    func insert(_ image: LoadedImage, cost: Int)
    /// Empties the cache (what the app does on a memory warning).
    func removeAll()
}

/// Foundation's `NSCache`, with a total cost limit or none (the seed's), as the modelled app uses it.
///
/// On Linux (swift-corelibs-foundation) `NSCache` enforces a limit inside `setObject` by evicting
/// the *cheapest* entry first, and among equal costs the one inserted last, and it never reacts to
/// memory pressure. With images of one size that means: once full, each new image evicts itself,
/// and the cache keeps the first images it was given. Without a limit it keeps everything until
/// `removeAll()` (the app's memory-warning handler).
public final class FoundationImageCache: ImageCache, @unchecked Sendable {
    // Safety: `cache` is never reassigned and NSCache takes its own lock in every method.
    private let cache = NSCache<NSNumber, LoadedImage>()

    /// A cache holding at most `costLimit` bytes of images (0: no limit).
    public init(costLimit: Int) {
        cache.totalCostLimit = costLimit
    }

    public func image(for post: Int) -> LoadedImage? {
        cache.object(forKey: NSNumber(value: post))
    }

    public func insert(_ image: LoadedImage, cost: Int) {
        cache.setObject(image, forKey: NSNumber(value: image.post), cost: cost)
    }

    public func removeAll() {
        cache.removeAllObjects()
    }
}

/// A least-recently-used cache with a total cost limit: inserting over the limit evicts the
/// entries used longest ago (a lookup counts as a use). Thread-safe.
public final class LRUCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entry {
        var value: Value
        var cost: Int
        /// The next entry towards the oldest.
        var older: Key?
        /// The next entry towards the newest.
        var newer: Key?
    }

    /// The entries as a doubly linked list threaded through the dictionary, newest at the head.
    private struct State {
        var entries: [Key: Entry] = [:]
        var newest: Key?
        var oldest: Key?
        var totalCost = 0

        mutating func unlink(_ key: Key) {
            guard let entry = entries[key] else { return }
            if let older = entry.older { entries[older]?.newer = entry.newer } else { oldest = entry.newer }
            if let newer = entry.newer { entries[newer]?.older = entry.older } else { newest = entry.older }
            entries[key]?.older = nil
            entries[key]?.newer = nil
        }

        mutating func pushNewest(_ key: Key) {
            entries[key]?.older = newest
            entries[key]?.newer = nil
            if let newest { entries[newest]?.newer = key }
            newest = key
            if oldest == nil { oldest = key }
        }

        mutating func remove(_ key: Key) {
            unlink(key)
            if let entry = entries.removeValue(forKey: key) { totalCost -= entry.cost }
        }
    }

    private let state = Mutex(State())
    /// The most the entries may cost together; inserting beyond it evicts the oldest.
    public let costLimit: Int

    /// An empty cache holding entries of at most `costLimit` total cost.
    public init(costLimit: Int) {
        self.costLimit = costLimit
    }

    /// The value for `key`, which becomes the most recently used; nil when not cached.
    public func value(for key: Key) -> Value? {
        state.withLock { state in
            guard let value = state.entries[key]?.value else { return nil }
            state.unlink(key)
            state.pushNewest(key)
            return value
        }
    }

    /// Caches `value` as the most recently used, then evicts the least recently used entries
    /// until the total cost is within the limit (the new entry last: one over the limit on its own is not kept).
    public func insert(_ value: Value, for key: Key, cost: Int) {
        // Evicted values are released after the lock, so their deinit never runs under it.
        let evicted: [Value] = state.withLock { state in
            state.remove(key)
            state.entries[key] = Entry(value: value, cost: max(cost, 0))
            state.totalCost += max(cost, 0)
            state.pushNewest(key)
            var evicted: [Value] = []
            while state.totalCost > costLimit, let oldest = state.oldest {
                if let entry = state.entries[oldest] { evicted.append(entry.value) }
                state.remove(oldest)
            }
            return evicted
        }
        _ = evicted
    }

    /// Removes every entry.
    public func removeAll() {
        let dropped = state.withLock { state in
            let entries = state.entries
            state = State()
            return entries
        }
        _ = dropped
    }

    /// Entries cached.
    public var count: Int { state.withLock { $0.entries.count } }

    /// Total cost of the entries.
    public var totalCost: Int { state.withLock { $0.totalCost } }

    /// Keys from the most to the least recently used.
    public var keysNewestFirst: [Key] {
        state.withLock { state in
            var keys: [Key] = []
            var cursor = state.newest
            while let key = cursor {
                keys.append(key)
                cursor = state.entries[key]?.older
            }
            return keys
        }
    }
}

/// The least-recently-used cache as the app's image cache.
public final class LRUImageCache: ImageCache {
    /// The cache itself (tests look inside).
    public let cache: LRUCache<Int, LoadedImage>

    /// A cache holding at most `costLimit` bytes of images.
    public init(costLimit: Int) {
        cache = LRUCache(costLimit: costLimit)
    }

    public func image(for post: Int) -> LoadedImage? {
        cache.value(for: post)
    }

    public func insert(_ image: LoadedImage, cost: Int) {
        cache.insert(image, for: image.post, cost: cost)
    }

    public func removeAll() {
        cache.removeAll()
    }
}
