import Foundation
import Testing

@testable import ImageFeedWorkload

struct ImageCacheTests {
    @Test func theLRUEvictsTheLeastRecentlyUsedWithinItsCostLimit() {
        let cache = LRUCache<Int, String>(costLimit: 30)
        cache.insert("a", for: 1, cost: 10)
        cache.insert("b", for: 2, cost: 10)
        cache.insert("c", for: 3, cost: 10)
        #expect(cache.keysNewestFirst == [3, 2, 1])
        #expect(cache.value(for: 1) == "a", "a lookup makes 1 the most recently used")
        cache.insert("d", for: 4, cost: 10)
        #expect(cache.keysNewestFirst == [4, 1, 3], "2 was used longest ago")
        #expect(cache.value(for: 2) == nil)
        #expect(cache.totalCost == 30)

        cache.insert("big", for: 5, cost: 25)
        #expect(cache.keysNewestFirst == [5], "everything older goes to make room")
        cache.insert("huge", for: 6, cost: 31)
        #expect(cache.count == 0 && cache.totalCost == 0, "an entry over the limit on its own is not kept")
    }

    @Test func reinsertingAKeyReplacesItsCost() {
        let cache = LRUCache<Int, String>(costLimit: 100)
        cache.insert("a", for: 1, cost: 40)
        cache.insert("a2", for: 1, cost: 10)
        #expect(cache.count == 1 && cache.totalCost == 10)
        #expect(cache.value(for: 1) == "a2")
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0 && cache.keysNewestFirst.isEmpty)
    }

    /// The images of three posts, written and loaded for real (16 KiB bitmaps from 4 KiB files).
    func images(_ posts: Range<Int>) throws -> [LoadedImage] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "image-cache-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = ImageFiles(directory: directory, fileSize: 4 << 10, decodedSize: 16 << 10)
        try files.generate(posts: posts.upperBound)
        return try posts.map { post throws(ImageFeedError) in try files.load(post, ledger: nil) }
    }

    @Test func loadingReadsThePostsFileAndDecodesItToTheBitmapSize() throws {
        let loaded = try images(0..<3)
        #expect(loaded.map(\.byteCount) == [16 << 10, 16 << 10, 16 << 10])
        #expect(loaded.map(\.lastByte) == (0..<3).map(ImageFiles.fill(of:)))
        #expect(Set(loaded.map(\.lastByte)).count == 3, "the posts' files differ")
    }

    /// swift-corelibs-foundation's NSCache evicts the cheapest entry first, the newest among equal
    /// costs: once full, an image of the same size evicts itself. The LRU evicts the oldest.
    @Test func nsCacheOnLinuxEvictsTheNewestOfEqualCostsWhereTheLRUEvictsTheOldest() throws {
        let loaded = try images(0..<4)
        let nsCache = FoundationImageCache(costLimit: 3 * (16 << 10))
        let lru = LRUImageCache(costLimit: 3 * (16 << 10))
        for image in loaded {
            nsCache.insert(image, cost: image.byteCount)
            lru.insert(image, cost: image.byteCount)
        }
        #expect((0..<4).map { nsCache.image(for: $0) != nil } == [true, true, true, false])
        #expect((0..<4).map { lru.image(for: $0) != nil } == [false, true, true, true])
        nsCache.removeAll()
        lru.removeAll()
        #expect((0..<4).allSatisfy { nsCache.image(for: $0) == nil && lru.image(for: $0) == nil })
    }
}
