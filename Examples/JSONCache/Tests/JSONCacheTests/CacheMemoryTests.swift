import Foundation
import JSONCache
import JSONCacheWorkload
import MemHarnessTesting
import Synchronization
import Testing

/// Memory expectations on the caches, in the ordinary `swift test` (MemHarnessTesting). Each expectation is
/// measured in a replica of this test binary that runs its test alone, so the tests running beside it in
/// parallel do not mix into its figures.
@Suite struct CacheMemoryTests {
    /// 400 articles of 8 KiB of JSON: 3.13 MiB when every response is kept.
    static let responseSize = 8 << 10
    static let articles = 400
    /// The LRU budget: 128 responses.
    static let budget = 1 << 20

    /// Reads every article once through a client over `cache`, as a reader scrolling a feed; the client and
    /// the cache must die with the closure.
    static func browse(_ cache: some ResponseCache, _ context: MemoryContext) throws {
        let client = ArticleClient(backend: ArticleBackend(responseSize: responseSize), cache: cache)
        context.track(client)
        context.track(cache)
        for id in 0..<articles { _ = try client.article(id: id) }
    }

    @Test func anLRUBudgetKeepsThePeakNearItsBudgetAndLeavesNothing() throws {
        let figures = try expectMemory(peakBelow: .mebibytes(2), residueBelow: .kibibytes(256), leaks: .none) {
            context in
            try Self.browse(LRUResponseCache(byteLimit: Self.budget), context)
        }
        // The limit is right because of what the cache holds at its top: the budget's worth of responses, each in
        // its size class (what the allocator hands out for it, which is what the figures count).
        #expect(
            figures.peakBytes >= Self.budget / Self.responseSize * AllocatorCost.bytes(forRequest: Self.responseSize))
        #expect(figures.leaks.trackedCount == 2)
        #expect(figures.survivors.isEmpty)
    }

    @Test func keepingEveryResponseBreaksATightLimitWithAMessageThatSaysByHowMuch() throws {
        let messages = Mutex<[String]>([])
        var measured: MemoryFigures?
        try withKnownIssue {
            measured = try expectMemory(peakBelow: .mebibytes(1)) { context in
                try Self.browse(UnboundedResponseCache(), context)
            }
        } matching: { issue in
            // Only the broken limit is expected; anything else (an error thrown) fails the test as usual.
            let message = issue.comments.map(\.rawValue).joined(separator: "\n")
            guard message.hasPrefix("peak ") else { return false }
            messages.withLock { $0.append(message) }
            return true
        }
        let figures = try #require(measured)
        // Every response is held at the top: 400 x 8 KiB.
        #expect(figures.peakBytes >= Self.articles * AllocatorCost.bytes(forRequest: Self.responseSize))
        let recorded = messages.withLock { $0 }
        #expect(recorded.count == 1)
        let message = try #require(recorded.first)
        #expect(message.hasPrefix("peak 3."), "\(message)")
        #expect(message.contains(" MiB above the start, over the 1 MiB limit by 2."), "\(message)")
        #expect(message.contains("hold less at once"), "the message says what to try: \(message)")
    }

    /// The workload the harness runs, one strategy of it measured here as a run measures a case: the descriptor's
    /// defaults, these overrides, its own steps (`browse`, then `revisit`), what it tracks judged by `leaks:`.
    @Test func theWorkloadsLRUStrategyHoldsItsBudgetAndLeavesNothing() throws {
        let figures = try expectMemory(
            of: JSONCacheWorkload(), strategy: "lru-budget",
            parameters: ["responseSize": "8KiB", "cacheBudget": "1MiB", "browse.count": "400", "revisit.count": "100"],
            peakBelow: .mebibytes(2), residueBelow: .kibibytes(256), leaks: .none)
        // At its top the cache holds the budget's worth of 8 KiB responses.
        #expect(
            figures.peakBytes >= Self.budget / Self.responseSize * AllocatorCost.bytes(forRequest: Self.responseSize))
        // The workload tracks its cache and its client; the expectation saw both, and both died.
        #expect(figures.leaks.trackedCount == 2)
        #expect(figures.survivors.isEmpty)
    }

    /// Fails on purpose when `JSONCACHE_SHOW_MEMORY_FAILURE` is set: what a broken limit looks like in
    /// `swift test` (memharness's own tests run it and read the output).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["JSONCACHE_SHOW_MEMORY_FAILURE"] != nil))
    func aDeliberatelyTightLimit() throws {
        try expectMemory(peakBelow: .mebibytes(1)) { context in
            try Self.browse(UnboundedResponseCache(), context)
        }
    }
}
