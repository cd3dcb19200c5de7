import WorkloadKit

/// A timeline of posts with images, scrolled through a few reusable cells (seed 001).
///
/// Every post has an image stored as a real file, generated once per case into the scratch
/// directory. A viewport of `visibleCells` cells moves through the timeline at `scrollSpeed`;
/// each move reuses the cell that left the screen for the post that enters, and binding a post
/// whose image is not in memory loads it: the file is read and, with a `decodedSize`, expanded
/// into a bitmap of that size (what the app keeps). The strategies differ in what happens to an
/// image when no cell shows its post any more, and in whether a cache sits in front of the disk.
///
/// The seed's cache (`NSCacheSwift`) has no count or cost limit: it grows until a memory warning
/// empties it, and the warning level and the memory limit decide what happens (`nscache-unbounded`).
/// The cost-limited caches are our addition, there to show what a limit buys (and that Linux's
/// NSCache evicts cheapest-first, not least recently used). NSCache on Linux ignores memory
/// pressure, so every cache strategy's warning handler empties its cache itself, as the seed's
/// cache empties on iOS; the handler runs between two cells, as on the app's main thread.
public struct ImageFeedWorkload: Workload {
    public init() {}

    /// The strategies, as `makeCase` understands them.
    public enum Strategy: String, Sendable, CaseIterable {
        case retainAll = "retain-all"
        case unbindOffscreen = "unbind-offscreen"
        case nscacheUnbounded = "nscache-unbounded"
        case unbindNSCache = "unbind-nscache"
        case unbindLRUCache = "unbind-lru-cache"

        /// Whether a reused cell unbinds its old post and releases an image nothing binds.
        var unbinds: Bool { self != .retainAll }
    }

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "image-feed",
            summary:
                "A timeline of posts with image files scrolled through reusable cells: images kept, released, or "
                + "cached.",
            strategies: Self.strategyDescriptors,
            parameters: Self.parameterSpecs,
            steps: Self.stepDescriptors,
            gauges: Self.gaugeDescriptors,
            metrics: Self.metricDescriptors,
            defaultSteps: ["scroll"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
    {
        guard let known = Strategy(rawValue: strategy) else {
            throw ImageFeedError.unknownStrategy(strategy, expected: Strategy.allCases.map(\.rawValue))
        }
        return ImageFeedCase(strategy: known, parameters: parameters, context: context)
    }
}

extension ImageFeedWorkload {
    /// The strategies, as `memharness list` and reports describe them.
    static let strategyDescriptors: [StrategyDescriptor] = [
        StrategyDescriptor(
            Strategy.retainAll.rawValue,
            "An image stays attached to its post once loaded, and cells never unbind (the seed's memory problem)."
        ),
        StrategyDescriptor(
            Strategy.unbindOffscreen.rawValue,
            "A reused cell unbinds its old post; an image no cell binds is released and read from disk again next time."
        ),
        StrategyDescriptor(
            Strategy.nscacheUnbounded.rawValue,
            "The seed's fix: as unbind-offscreen, plus Foundation's NSCache with no count or cost limit, emptied on "
                + "a memory warning."
        ),
        StrategyDescriptor(
            Strategy.unbindNSCache.rawValue,
            "As nscache-unbounded, but with a cost limit (cacheCostLimit; our addition, not the seed's)."),
        StrategyDescriptor(
            Strategy.unbindLRUCache.rawValue,
            "As unbind-offscreen, plus a least-recently-used cache with a cost limit (our addition), emptied on a "
                + "memory warning."
        ),
    ]

    /// The parameters a scenario file may set, with their defaults and ranges.
    static let parameterSpecs: [ParameterSpec] = [
        .count("posts", default: 400, range: 1...100_000, "Posts in the timeline, one image file each."),
        .bytes(
            "imageSize", default: 128 << 10, range: 16...(64 << 20),
            "Size of each image file (what a load reads)."),
        .bytes(
            "decodedSize", default: 1 << 20, range: 0...(256 << 20),
            "Size of the bitmap an image is decoded into and kept as; 0 keeps the file's bytes undecoded."),
        .count(
            "visibleCells", default: 5, range: 1...1_000,
            "Cells on screen at once (reused as the viewport moves)."),
        .rate(
            "scrollSpeed", default: 500, range: 1...1_000_000,
            "Cells scrolled per second (a slow load makes the scroll fall behind)."),
        .bytes(
            "cacheCostLimit", default: 32 << 20, range: 0...(16 << 30),
            "Total bytes of images unbind-nscache and unbind-lru-cache keep (NSCache totalCostLimit; the LRU's "
                + "limit); 0 means no limit. nscache-unbounded ignores it."
        ),
    ]

    /// The steps a scenario's script may use, with their arguments.
    static let stepDescriptors: [StepDescriptor] = [
        StepDescriptor(
            "scroll",
            "Scroll the viewport: `stride` posts on, `backtrack` back, until it moved `distance` posts or hit an end.",
            arguments: [
                .count("distance", default: 400, range: 0...1_000_000, "Net posts to move."),
                .count("stride", default: 40, range: 1...1_000_000, "Posts moved on before each glance back."),
                .count(
                    "backtrack", default: 20, range: 0...1_000_000,
                    "Posts moved back at each glance (below stride); 0 scrolls straight through."),
                .choice(
                    "direction", ["down", "up"], default: "down",
                    "down: towards older posts; up: back to the top."),
            ])
    ]

    /// The gauges sampled beside the allocator's figures.
    static let gaugeDescriptors: [GaugeDescriptor] = [
        GaugeDescriptor("imagesInMemory", "Images alive (attached to posts or cached)."),
        GaugeDescriptor("imageBytes", "Bytes of the images alive."),
        GaugeDescriptor("bindings", "Cell bindings on posts' images (grows without unbinding)."),
        GaugeDescriptor("viewportTop", "Index of the post at the top of the screen."),
    ]

    /// The metrics a case reports when it ends.
    static let metricDescriptors: [MetricDescriptor] = [
        MetricDescriptor("cellsScrolled", .count, "Cells that scrolled into view."),
        MetricDescriptor("diskLoads", .count, "Images read from disk and decoded."),
        MetricDescriptor(
            "hitRate", .ratio, "Share of cells whose image was already in memory (attached or cached)."),
        MetricDescriptor("cellTimeP50", .milliseconds, "Median time to bind a cell, load included."),
        MetricDescriptor("cellTimeP99", .milliseconds, "99th percentile time to bind a cell, load included."),
        MetricDescriptor("peakImageBytes", .bytes, "Most image bytes alive at once."),
        MetricDescriptor("warningsReceived", .count, "Memory warnings the app's handler received."),
        MetricDescriptor(
            "bytesFreedPerWarning", .bytes, "Image bytes released per memory warning, on average."),
        MetricDescriptor(
            "warningHandlingTime", .milliseconds,
            "Time the handler spent emptying per warning, on average (the cells wait meanwhile)."),
    ]
}
