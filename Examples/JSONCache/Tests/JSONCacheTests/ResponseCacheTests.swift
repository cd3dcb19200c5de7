import Foundation
import JSONCache
import Testing

@Suite struct ArticleBackendTests {
    @Test(arguments: [256, 1000, 16 << 10])
    func responsesHaveExactlyTheRequestedSizeAndDecode(size: Int) throws {
        let backend = ArticleBackend(responseSize: size)
        let response = backend.response(forArticle: 42)
        #expect(response.count == size)
        let article = try JSONDecoder().decode(Article.self, from: response)
        #expect(article.id == 42)
        #expect(article.title == "Article 42")
    }

    @Test func pathsStayShortEnoughForInlineStrings() {
        // Swift keeps UTF-8 strings of up to 15 bytes inline: cache keys then cost no allocation.
        #expect(ArticleBackend.path(ofArticle: 99_999).utf8.count <= 15)
    }
}

@Suite struct UnboundedResponseCacheTests {
    @Test func keepsEveryResponseAndCountsTheirBytes() {
        let cache = UnboundedResponseCache()
        for id in 0..<100 { cache.store(Data(count: 1000), for: "/articles/\(id)") }
        #expect(cache.count == 100)
        #expect(cache.totalBytes == 100_000)
        #expect(cache.evictions == 0)
        #expect(cache.response(for: "/articles/0")?.count == 1000)
    }

    @Test func replacingAResponseCountsOnlyTheNewOne() {
        let cache = UnboundedResponseCache()
        cache.store(Data(count: 1000), for: "/a")
        cache.store(Data(count: 300), for: "/a")
        #expect(cache.count == 1)
        #expect(cache.totalBytes == 300)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalBytes == 0)
    }
}

@Suite struct LRUResponseCacheTests {
    @Test func neverHoldsMoreThanItsLimitAndDropsTheLeastRecentlyUsed() {
        let cache = LRUResponseCache(byteLimit: 3000)
        for id in 0..<5 { cache.store(Data(count: 1000), for: "/\(id)") }
        #expect(cache.count == 3)
        #expect(cache.totalBytes == 3000)
        #expect(cache.evictions == 2)
        #expect(cache.pathsByRecency == ["/4", "/3", "/2"])
        #expect(cache.response(for: "/0") == nil)
    }

    @Test func aHitMakesAResponseTheMostRecentlyUsed() {
        let cache = LRUResponseCache(byteLimit: 3000)
        for id in 0..<3 { cache.store(Data(count: 1000), for: "/\(id)") }
        #expect(cache.response(for: "/0") != nil)
        cache.store(Data(count: 1000), for: "/3")
        #expect(cache.pathsByRecency == ["/3", "/0", "/2"], "/1 was the least recently used")
    }

    @Test func aResponseLargerThanTheLimitIsNotStored() {
        let cache = LRUResponseCache(byteLimit: 1000)
        cache.store(Data(count: 500), for: "/small")
        cache.store(Data(count: 1001), for: "/large")
        #expect(cache.response(for: "/large") == nil)
        #expect(cache.pathsByRecency == ["/small"], "an oversized response evicts nothing")
        #expect(cache.evictions == 0)
    }

    @Test func replacingAResponseMovesItToTheFrontAndRecountsItsBytes() {
        let cache = LRUResponseCache(byteLimit: 3000)
        cache.store(Data(count: 1000), for: "/a")
        cache.store(Data(count: 1000), for: "/b")
        cache.store(Data(count: 2000), for: "/a")
        #expect(cache.totalBytes == 3000)
        #expect(cache.pathsByRecency == ["/a", "/b"])
        #expect(cache.evictions == 0)
    }

    @Test func freedSlotsAreReusedAndRemoveAllEmptiesTheCache() {
        let cache = LRUResponseCache(byteLimit: 2000)
        for id in 0..<50 { cache.store(Data(count: 1000), for: "/\(id)") }
        #expect(cache.pathsByRecency == ["/49", "/48"])
        #expect(cache.evictions == 48)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalBytes == 0)
        #expect(cache.pathsByRecency.isEmpty)
    }

    @Test func aZeroLimitStoresNothing() {
        let cache = LRUResponseCache(byteLimit: 0)
        cache.store(Data(count: 1), for: "/a")
        #expect(cache.count == 0)
    }
}

@Suite struct ArticleClientTests {
    @Test func missesGoToTheBackendAndHitsComeFromTheCache() throws {
        let client = ArticleClient(
            backend: ArticleBackend(responseSize: 1024), cache: LRUResponseCache(byteLimit: 2048))
        for id in [1, 2, 1, 3, 1, 2] { #expect(try client.article(id: id).id == id) }
        // 1 miss, 2 miss, 1 hit, 3 miss (evicts 2), 1 hit, 2 miss (evicts 3).
        #expect(client.misses == 4)
        #expect(client.hits == 2)
        #expect(client.cache.evictions == 2)
    }
}
