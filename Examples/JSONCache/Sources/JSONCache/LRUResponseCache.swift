import Foundation

/// Keeps responses up to a byte limit, dropping the least recently used first.
///
/// The limit counts response bytes (`Data.count`). A response larger than the whole limit is not
/// stored. Room is made before a response is stored, so the cache never holds more than the limit.
/// Entries live in an array and link to each other by index: no reference cycles, and eviction and
/// a hit are O(1).
public final class LRUResponseCache: ResponseCache {
    /// The most response bytes the cache holds.
    public let byteLimit: Int
    public private(set) var totalBytes = 0
    public private(set) var evictions = 0
    public var count: Int { slotOfPath.count }

    private struct Entry {
        var path: String
        var response: Data
        /// Slots of the neighbours in recency order; nil at either end.
        var newer: Int?
        var older: Int?
    }

    private var entries: [Entry?] = []
    private var freeSlots: [Int] = []
    private var slotOfPath: [String: Int] = [:]
    private var newest: Int?
    private var oldest: Int?

    /// A cache that holds at most `byteLimit` bytes of responses.
    public init(byteLimit: Int) {
        precondition(byteLimit >= 0, "a byte limit cannot be negative")
        self.byteLimit = byteLimit
    }

    public func response(for path: String) -> Data? {
        guard let slot = slotOfPath[path], let entry = entries[slot] else { return nil }
        unlink(slot)
        linkAsNewest(slot)
        return entry.response
    }

    public func store(_ response: Data, for path: String) {
        if let slot = slotOfPath[path] { remove(slot) }
        guard response.count <= byteLimit else { return }
        while totalBytes + response.count > byteLimit, let oldest {
            remove(oldest)
            evictions += 1
        }
        let entry = Entry(path: path, response: response)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            entries[slot] = entry
        } else {
            slot = entries.count
            entries.append(entry)
        }
        slotOfPath[path] = slot
        totalBytes += response.count
        linkAsNewest(slot)
    }

    public func removeAll() {
        entries = []
        freeSlots = []
        slotOfPath = [:]
        newest = nil
        oldest = nil
        totalBytes = 0
    }

    /// Paths from the most to the least recently used (for tests and debugging).
    public var pathsByRecency: [String] {
        var paths: [String] = []
        var slot = newest
        while let current = slot, let entry = entries[current] {
            paths.append(entry.path)
            slot = entry.older
        }
        return paths
    }

    private func remove(_ slot: Int) {
        guard let entry = entries[slot] else { return }
        unlink(slot)
        entries[slot] = nil
        freeSlots.append(slot)
        slotOfPath[entry.path] = nil
        totalBytes -= entry.response.count
    }

    private func unlink(_ slot: Int) {
        guard let entry = entries[slot] else { return }
        if let newer = entry.newer { entries[newer]?.older = entry.older } else { newest = entry.older }
        if let older = entry.older { entries[older]?.newer = entry.newer } else { oldest = entry.newer }
        entries[slot]?.newer = nil
        entries[slot]?.older = nil
    }

    private func linkAsNewest(_ slot: Int) {
        entries[slot]?.older = newest
        entries[slot]?.newer = nil
        if let newest { entries[newest]?.newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }
}
