import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

/// A post of the timeline: its image slot and how many cells bind it (the seed's `post.image`
/// with its bonds).
final class Post {
    let index: Int
    /// The image attached to the post, nil until loaded (and again once released).
    var image: LoadedImage?
    /// Cells bound to the image slot.
    var bindings = 0

    init(index: Int) {
        self.index = index
    }
}

/// A reusable cell of the table: shows one post at a time.
final class Cell {
    var post: Post?
}

/// Memory warnings the case's handler received and the image bytes each gave back (written on the
/// warning thread, read on the case's main thread).
final class WarningCounter: Sendable {
    private let received = Atomic<Int>(0)
    private let freed = Atomic<Int64>(0)

    private let handlingNanoseconds = Atomic<Int64>(0)

    /// Records one warning whose handling released `freedBytes` of images in `nanoseconds`.
    func record(freedBytes: Int64, nanoseconds: Int64) {
        freed.add(freedBytes, ordering: .relaxed)
        handlingNanoseconds.add(nanoseconds, ordering: .relaxed)
        received.add(1, ordering: .relaxed)
    }

    /// Time the handler held the main thread over every warning, nanoseconds.
    var handlingTimeNanoseconds: Int64 { handlingNanoseconds.load(ordering: .relaxed) }

    /// Warnings handled so far.
    var value: Int { received.load(ordering: .relaxed) }

    /// Image bytes released by the handler over every warning, bytes.
    var freedBytes: Int64 { freed.load(ordering: .relaxed) }
}

/// The app's main thread as a turn to take: cells are bound, and memory warnings handled, one at a time.
final class MainThreadTurn: Sendable {
    private let mutex = Mutex<Void>(())

    /// Runs `body` on the main thread's turn.
    func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try mutex.withLock { _ throws(Failure) -> Result in try body() }
    }
}

/// One case of the image feed: a timeline, a viewport of cells, maybe a cache.
final class ImageFeedCase: WorkloadCase {
    let strategy: ImageFeedWorkload.Strategy
    private let files: ImageFiles
    private let postCount: Int
    private let visibleCells: Int
    private let scrollIntervalNanoseconds: Int64
    private let ledger: ImageLedger
    private let bindingsGauge: Gauge
    private let topGauge: Gauge
    /// The cache in front of the disk (cache strategies only).
    let cache: (any ImageCache)?
    private let warnings = WarningCounter()
    /// Held for each cell and by the warning handler: the app handles a memory warning between two
    /// cells, as its main thread would, so the bytes a warning frees are exact.
    private let mainThread = MainThreadTurn()

    private var posts: [Post] = []
    private var cells: [Cell] = []
    /// Index of the post at the top of the screen.
    private(set) var top = 0

    // Figures over the scroll steps.
    private(set) var cellsScrolled = 0
    private(set) var diskLoads = 0
    private(set) var memoryHits = 0
    private var cellNanoseconds: [Int64] = []

    init(strategy: ImageFeedWorkload.Strategy, parameters: ParameterValues, context: CaseContext) {
        self.strategy = strategy
        files = ImageFiles(
            directory: context.scratchDirectory, fileSize: parameters.bytes("imageSize"),
            decodedSize: parameters.bytes("decodedSize"))
        postCount = parameters.count("posts")
        visibleCells = min(parameters.count("visibleCells"), postCount)
        scrollIntervalNanoseconds = Int64(1e9 / parameters.rate("scrollSpeed"))
        ledger = ImageLedger(count: context.gauge("imagesInMemory"), bytes: context.gauge("imageBytes"))
        bindingsGauge = context.gauge("bindings")
        topGauge = context.gauge("viewportTop")
        switch strategy {
        case .nscacheUnbounded: cache = FoundationImageCache(costLimit: 0)
        case .unbindNSCache: cache = FoundationImageCache(costLimit: parameters.bytes("cacheCostLimit"))
        case .unbindLRUCache:
            // The LRU treats 0 as "nothing fits"; the parameter means "no limit", as NSCache reads it.
            let limit = parameters.bytes("cacheCostLimit")
            cache = LRUImageCache(costLimit: limit == 0 ? Int.max : limit)
        case .retainAll, .unbindOffscreen: cache = nil
        }
    }

    /// Writes the image files, makes the posts and cells, and shows the first screen.
    func setUp(context: CaseContext) throws {
        try files.generate(posts: postCount)
        posts = (0..<postCount).map(Post.init(index:))
        cells = (0..<visibleCells).map { _ in Cell() }
        let cache = self.cache
        let warnings = self.warnings
        let ledger = self.ledger
        let mainThread = self.mainThread
        // The app's memory-warning handler: the cache strategies empty their cache (NSCache on Linux
        // does not react to memory pressure by itself, the seed's NSCacheSwift does); the others have
        // nothing to give back (what cells show stays, as it would on screen). Images a cell still
        // shows stay alive through their post, so only the others are freed.
        context.onMemoryWarning {
            mainThread.run {
                let start = Pacer.monotonicNanoseconds()
                let before = ledger.bytes.value
                cache?.removeAll()
                warnings.record(
                    freedBytes: before - ledger.bytes.value, nanoseconds: Pacer.monotonicNanoseconds() - start)
            }
        }
        try mainThread.run { () throws(ImageFeedError) in
            for index in 0..<visibleCells {
                _ = try bind(cells[index], to: posts[index])
            }
        }
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        guard step.name == "scroll" else { return }
        let plan = ScrollPlan(
            distance: step.arguments.count("distance"), stride: step.arguments.count("stride"),
            backtrack: step.arguments.count("backtrack"), forward: step.arguments.choice("direction") == "down")
        let positions = plan.positions(from: top, lastTop: postCount - visibleCells)
        cellNanoseconds.reserveCapacity(cellNanoseconds.count + positions.count)
        let start = Self.now()
        for (move, position) in positions.enumerated() {
            Self.sleep(until: start + Int64(move) * scrollIntervalNanoseconds)
            let before = Self.now()
            let servedFromMemory = try mainThread.run { () throws(ImageFeedError) in try scroll(to: position) }
            cellNanoseconds.append(Self.now() - before)
            cellsScrolled += 1
            if servedFromMemory { memoryHits += 1 } else { diskLoads += 1 }
        }
    }

    /// Unbinds every cell and drops every image, cached or attached.
    func tearDown(context: CaseContext) throws {
        for cell in cells {
            if let post = cell.post { unbind(post) }
            cell.post = nil
        }
        for post in posts {
            post.image = nil
            post.bindings = 0
        }
        cache?.removeAll()
        posts = []
        cells = []
        bindingsGauge.set(0)
    }

    func metrics() -> [Metric] {
        let times = cellNanoseconds.map { Double($0) / 1e6 }
        return [
            Metric(name: "cellsScrolled", value: Double(cellsScrolled), unit: .count),
            Metric(name: "diskLoads", value: Double(diskLoads), unit: .count),
            Metric(
                name: "hitRate", value: cellsScrolled == 0 ? 0 : Double(memoryHits) / Double(cellsScrolled),
                unit: .ratio),
            Metric(name: "cellTimeP50", value: Statistics.percentile(times, 50) ?? 0, unit: .milliseconds),
            Metric(name: "cellTimeP99", value: Statistics.percentile(times, 99) ?? 0, unit: .milliseconds),
            Metric(name: "peakImageBytes", value: Double(ledger.peakBytes), unit: .bytes),
            Metric(name: "warningsReceived", value: Double(warnings.value), unit: .count),
            Metric(
                name: "bytesFreedPerWarning",
                value: warnings.value == 0 ? 0 : Double(warnings.freedBytes) / Double(warnings.value),
                unit: .bytes),
            // What emptying costs the main thread: the cells wait meanwhile.
            Metric(
                name: "warningHandlingTime",
                value: warnings.value == 0
                    ? 0 : Double(warnings.handlingTimeNanoseconds) / 1e6 / Double(warnings.value),
                unit: .milliseconds),
        ]
    }

    /// Memory warnings the case's handler has received so far.
    var warningsReceived: Int { warnings.value }

    /// Image bytes the warning handler released so far, bytes.
    var bytesFreedByWarnings: Int64 { warnings.freedBytes }

    /// Moves the viewport by one post to `position`: the cell that leaves is reused for the post
    /// that enters. Returns whether the entering image came from memory (attached or cached).
    private func scroll(to position: Int) throws(ImageFeedError) -> Bool {
        // Post p is shown by cell p % visibleCells: the visible posts are consecutive, so no two share a cell.
        let entering = position > top ? position + visibleCells - 1 : position
        top = position
        topGauge.set(Int64(position))
        return try bind(cells[entering % visibleCells], to: posts[entering])
    }

    /// The seed's `PostTableViewCell.post` `didSet`: unbind the old post (releasing its image when
    /// nothing binds it any more), bind the new one, and load its image if it has none.
    /// Returns whether the image came from memory.
    private func bind(_ cell: Cell, to post: Post) throws(ImageFeedError) -> Bool {
        if let old = cell.post, old !== post, strategy.unbinds {
            unbind(old)
        }
        cell.post = post
        post.bindings += 1
        bindingsGauge.increment()
        if post.image != nil { return true }
        if let cached = cache?.image(for: post.index) {
            post.image = cached
            return true
        }
        let image = try files.load(post.index, ledger: ledger)
        post.image = image
        cache?.insert(image, cost: image.byteCount)
        return false
    }

    private func unbind(_ post: Post) {
        post.bindings -= 1
        bindingsGauge.decrement()
        if post.bindings == 0 && strategy.unbinds {
            post.image = nil
        }
    }

    private static func now() -> Int64 {
        Pacer.monotonicNanoseconds()
    }

    /// Sleeps until `deadline` (monotonic nanoseconds); returns at once when it has passed.
    private static func sleep(until deadline: Int64) {
        Pacer.sleep(untilMonotonicNanoseconds: deadline)
    }
}
