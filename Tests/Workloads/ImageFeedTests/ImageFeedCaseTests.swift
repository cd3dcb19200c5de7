import AllocatorProbe
import Foundation
import HarnessModel
import Measurement
import TestSupport
import Testing
import WorkloadKit

@testable import ImageFeedWorkload

#if canImport(Glibc)
    import Glibc
#endif

/// Image-feed cases run in this process on a small timeline: 60 posts, 4 KiB files decoded to
/// 16 KiB, 4 cells, a cache of 8 images, scrolled to the end 8 posts on and 4 back.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ImageFeedCaseTests {
    static let decodedSize = 16 << 10
    static let posts = 60
    static let cells = 4

    /// A set-up case with its context and scratch directory (removed by `finish`).
    struct Running {
        let feed: ImageFeedCase
        let context: CaseContext
        let directory: String

        func gauge(_ name: String) -> Int64 { context.gauge(name).value }

        func metric(_ name: String) -> Double? { feed.metrics().first { $0.name == name }?.value }

        func scroll(distance: Int = 60, stride: Int = 8, backtrack: Int = 4, direction: String = "down") throws {
            try feed.run(
                StepInvocation(
                    name: "scroll", phase: "scroll",
                    arguments: ParameterValues([
                        "distance": .count(distance), "stride": .count(stride), "backtrack": .count(backtrack),
                        "direction": .choice(direction),
                    ])), context: context)
        }

        func finish() throws {
            try feed.tearDown(context: context)
            context.memoryWarnings.end()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    func start(_ strategy: ImageFeedWorkload.Strategy, decodedSize: Int = decodedSize) throws -> Running {
        let workload = ImageFeedWorkload()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("image-feed-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let context = CaseContext(
            strategy: strategy.rawValue, gaugeNames: workload.descriptor.gauges.map(\.name), scratchDirectory: directory
        )
        var parameters = ParameterValues(
            Dictionary(uniqueKeysWithValues: workload.descriptor.parameters.map { ($0.name, $0.defaultValue) }))
        parameters["posts"] = .count(Self.posts)
        parameters["imageSize"] = .bytes(4 << 10)
        parameters["decodedSize"] = .bytes(decodedSize)
        parameters["visibleCells"] = .count(Self.cells)
        parameters["scrollSpeed"] = .rate(perSecond: 1_000_000)
        parameters["cacheCostLimit"] = .bytes(8 * decodedSize)
        let feed = try #require(
            try workload.makeCase(strategy: strategy.rawValue, parameters: parameters, context: context)
                as? ImageFeedCase)
        try feed.setUp(context: context)
        return Running(feed: feed, context: context, directory: directory)
    }

    @Test func retainAllKeepsEveryImageItLoadedAndPilesUpBindings() throws {
        let running = try start(.retainAll)
        #expect(running.gauge("imagesInMemory") == Int64(Self.cells), "the first screen")
        try running.scroll()
        #expect(
            running.gauge("imagesInMemory") == Int64(Self.posts), "every post was on screen once and kept its image")
        #expect(running.gauge("imageBytes") == Int64(Self.posts * Self.decodedSize))
        #expect(running.metric("diskLoads") == Double(Self.posts - Self.cells), "each image read once")
        let scrolled = try #require(running.metric("cellsScrolled"))
        #expect(running.gauge("bindings") == Int64(Self.cells) + Int64(scrolled), "cells never unbind")
        #expect(try #require(running.metric("hitRate")) > 0.3, "glancing back finds the images still attached")
        try running.finish()
        #expect(running.gauge("imagesInMemory") == 0 && running.gauge("imageBytes") == 0)
    }

    @Test func unbindingKeepsOnlyWhatIsOnScreenAndReadsEveryEnteringImage() throws {
        let running = try start(.unbindOffscreen)
        try running.scroll()
        #expect(running.gauge("imagesInMemory") == Int64(Self.cells))
        #expect(running.gauge("bindings") == Int64(Self.cells))
        #expect(running.metric("hitRate") == 0)
        #expect(running.metric("diskLoads") == running.metric("cellsScrolled"))
        #expect(try #require(running.metric("peakImageBytes")) <= Double((Self.cells + 1) * Self.decodedSize))
        try running.finish()
    }

    @Test func theLRUServesGlancesBackWhereLinuxsNSCacheBarelyHelps() throws {
        let lru = try start(.unbindLRUCache)
        try lru.scroll()
        let nsCache = try start(.unbindNSCache)
        try nsCache.scroll()
        let lruHits = try #require(lru.metric("hitRate"))
        let nsCacheHits = try #require(nsCache.metric("hitRate"))
        #expect(lru.metric("cellsScrolled") == nsCache.metric("cellsScrolled"))
        #expect(lruHits > 0.5, "the posts scrolled back to are the most recently used")
        #expect(nsCacheHits < 0.2, "once full, NSCache evicts each new image at once and keeps the first ones")
        #expect(try #require(lru.metric("diskLoads")) < (try #require(nsCache.metric("diskLoads"))))
        // Both hold about the cache's limit in images besides the screen.
        for running in [lru, nsCache] {
            #expect(running.gauge("imagesInMemory") <= Int64(8 + Self.cells))
            #expect(running.gauge("imagesInMemory") > Int64(Self.cells))
        }
        try lru.finish()
        try nsCache.finish()
    }

    /// The seed's cache: NSCache with no limit keeps every image it was given (Linux's NSCache
    /// never evicts by itself), until the app's warning handler empties it.
    @Test func theUnboundedNSCacheKeepsEveryImageUntilAWarningEmptiesIt() throws {
        let running = try start(.nscacheUnbounded)
        try running.scroll()
        // Every post was on screen once; its image is still cached although no cell binds it.
        #expect(running.gauge("imagesInMemory") == Int64(Self.posts))
        #expect(running.gauge("bindings") == Int64(Self.cells), "cells unbind as they are reused")
        #expect(
            running.metric("diskLoads") == Double(Self.posts - Self.cells),
            "each image read once, every glance back a hit")
        #expect(try #require(running.metric("hitRate")) > 0.5)
        #expect(running.metric("bytesFreedPerWarning") == 0, "no warning yet")

        running.context.memoryWarnings.post()
        #expect(
            waitUntil { running.context.memoryWarnings.deliveredCount >= 1 }, "the warning was never delivered")
        // The warning emptied it: only what the cells show is left, and the rest was freed.
        #expect(running.gauge("imagesInMemory") == Int64(Self.cells))
        #expect(running.gauge("imageBytes") == Int64(Self.cells * Self.decodedSize))
        #expect(running.metric("warningsReceived") == 1)
        #expect(running.metric("bytesFreedPerWarning") == Double((Self.posts - Self.cells) * Self.decodedSize))
        #expect(try #require(running.metric("warningHandlingTime")) > 0, "emptying took the main thread's turn")

        // It fills again from where it is: scrolling back reads from disk and caches anew.
        let loadsBefore = try #require(running.metric("diskLoads"))
        try running.scroll(distance: 10, stride: 10, backtrack: 0, direction: "up")
        #expect(running.metric("diskLoads") == loadsBefore + 10)
        #expect(running.gauge("imagesInMemory") == 10, "the ten reloaded images, the screen among them")
        try running.finish()
    }

    @Test(arguments: [ImageFeedWorkload.Strategy.nscacheUnbounded, .unbindNSCache, .unbindLRUCache])
    func theCacheStrategiesDropTheirCacheOnAMemoryWarning(strategy: ImageFeedWorkload.Strategy) throws {
        let running = try start(strategy)
        try running.scroll()
        // The gauge sees the cached images beside the ones on screen...
        #expect(running.gauge("imagesInMemory") > Int64(Self.cells))
        running.context.memoryWarnings.post()
        #expect(
            waitUntil { running.context.memoryWarnings.deliveredCount >= 1 }, "the warning was never delivered")
        // ...and after the warning only the ones on screen are left.
        #expect(running.gauge("imagesInMemory") == Int64(Self.cells))
        #expect(running.metric("warningsReceived") == 1)
        // Scrolling back now reads from disk again.
        let loadsBefore = try #require(running.metric("diskLoads"))
        try running.scroll(distance: 4, stride: 4, backtrack: 0, direction: "up")
        #expect(running.metric("diskLoads") == loadsBefore + 4)
        try running.finish()
    }

    @Test(arguments: [ImageFeedWorkload.Strategy.retainAll, .unbindOffscreen])
    func theOtherStrategiesHaveNothingToGiveBackOnAWarning(strategy: ImageFeedWorkload.Strategy) throws {
        let running = try start(strategy)
        try running.scroll()
        let before = running.gauge("imagesInMemory")
        running.context.memoryWarnings.post()
        #expect(
            waitUntil { running.context.memoryWarnings.deliveredCount >= 1 }, "the warning was never delivered")
        #expect(running.gauge("imagesInMemory") == before)
        #expect(running.metric("warningsReceived") == 1)
        #expect(running.metric("bytesFreedPerWarning") == 0)
        try running.finish()
    }

    @Test func withoutDecodingAnImageIsTheFilesBytes() throws {
        let running = try start(.unbindOffscreen, decodedSize: 0)
        #expect(running.gauge("imageBytes") == Int64(Self.cells * (4 << 10)))
        try running.finish()
    }

    /// The allocator agrees with the gauges: retain-all's images are really allocated, and teardown
    /// really gives them back.
    @Test func retainAllsImagesAreAllocatedAndTeardownFreesThem() throws {
        let probe = try JemallocProbe()
        let size = 256 << 10
        let before = probe.allocatedBytes()
        let running = try start(.retainAll, decodedSize: size)
        let firstScreen = probe.allocatedBytes()
        try running.scroll()
        let added = probe.allocatedBytes() - firstScreen
        let loaded = Self.posts - Self.cells
        // Within two bitmaps: other threads' caches (counted as allocated) flush when threads end.
        #expect(
            abs(added - loaded * size) < 2 * size,
            "the probe sees the \(loaded) bitmaps loaded while scrolling: \(added) bytes")
        try running.finish()
        probe.flushThreadCache()
        #expect(probe.allocatedBytes() - before < 2 * size, "after teardown less than two bitmaps' worth is left")
    }

    /// Through the harness under a memory budget (limit and warning level above this process's
    /// current footprint): the sampler's warnings empty the unbounded cache, which survives, while
    /// `retain-all` has nothing to give back and crosses the limit.
    @Test func underAMemoryBudgetTheUnboundedCacheSurvivesOnWarningsWhereRetainAllIsKilled() throws {
        let probe = try JemallocProbe()
        probe.flushThreadCache()
        let decodedSize = 256 << 10
        let budget = MemoryBudget(
            footprint: .allocated, limitBytes: probe.allocatedBytes() + (32 << 20),
            warningBytes: probe.allocatedBytes() + (16 << 20))
        func run(_ strategy: ImageFeedWorkload.Strategy) throws -> CaseResult {
            let workload = ImageFeedWorkload()
            var parameters = ParameterValues(
                Dictionary(uniqueKeysWithValues: workload.descriptor.parameters.map { ($0.name, $0.defaultValue) }))
            parameters["posts"] = .count(200)
            parameters["imageSize"] = .bytes(4 << 10)
            parameters["decodedSize"] = .bytes(decodedSize)
            parameters["scrollSpeed"] = .rate(perSecond: 2000)
            let scroll = StepInvocation(
                name: "scroll", phase: "scroll",
                arguments: ParameterValues([
                    "distance": .count(200), "stride": .count(8), "backtrack": .count(4), "direction": .choice("down"),
                ]))
            let spec = CaseSpec(
                scenario: "test", workload: "image-feed", strategy: strategy.rawValue, repetition: 1,
                parameters: parameters, steps: [scroll], samplingIntervalNanoseconds: 1_000_000,
                settleNanoseconds: 10_000_000, memoryBudget: budget)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "image-feed-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            return try CaseExecutor(catalog: WorkloadCatalog([workload])).result(spec, scratchDirectory: directory)
        }

        // The probe: 200 images of 256 KiB kept are 50 MiB, over the 32 MiB limit.
        let retainAll = try run(.retainAll)
        #expect(retainAll.status == .killedByMemoryLimit, "\(String(describing: retainAll.failure))")

        let unbounded = try run(.nscacheUnbounded)
        #expect(unbounded.status == .ok, "\(String(describing: unbounded.failure))")
        expectMetrics(unbounded.completed?.metrics ?? [], declaredBy: ImageFeedWorkload().descriptor, complete: true)
        let warnings = try #require(unbounded.metric("warningsReceived")?.value)
        #expect(warnings >= 2, "it fills to the warning level, empties, and fills again")
        #expect(
            unbounded.completed?.memoryWarnings.map(Double.init) == warnings, "every warning posted reached the handler"
        )
        let freed = try #require(unbounded.metric("bytesFreedPerWarning")?.value)
        // A warning comes at 16 MiB over the baseline: the cache holds at least most of that by then.
        #expect(freed >= Double(8 << 20) && freed <= Double(32 << 20), "\(freed) bytes freed per warning")
        #expect(try #require(unbounded.metric("hitRate")?.value) > 0.3)
    }
}
