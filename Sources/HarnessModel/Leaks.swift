/// What a scenario file says a strategy should do about leaks (`expect: leak-free` or `expect: leaks`).
public enum LeakExpectation: String, Sendable, Hashable, Codable, CaseIterable {
    /// The strategy must not leak; a leak is a finding.
    case leakFree = "leak-free"
    /// The strategy is known to leak (a demonstration of the pitfall); a leak is not a finding.
    case leaks
}

/// A count of objects of one tracked type.
public struct TypeCount: Sendable, Hashable, Codable {
    /// The name the workload tracked the objects under (`ProfileScreen`).
    public var typeName: String
    public var count: Int

    public init(typeName: String, count: Int) {
        self.typeName = typeName
        self.count = count
    }
}

/// The live heap after each iteration of a `repeat` step, for the growth-per-iteration fit.
public struct GrowthSeries: Sendable, Hashable, Codable {
    /// The phase of the `repeat` step (`repeat`, or the `phase:` the file gives).
    public var phase: String
    /// Leading iterations left out of the fit (lazy globals, framework caches, first-use growth).
    public var warmupIterations: Int
    /// Live heap after each iteration's settle, absolute bytes: `stats.allocated` minus the bytes
    /// freed into thread caches, in size-class bytes. Index 0 is the first iteration.
    public var liveBytesAfterIteration: [Int]

    public init(phase: String, warmupIterations: Int, liveBytesAfterIteration: [Int]) {
        self.phase = phase
        self.warmupIterations = warmupIterations
        self.liveBytesAfterIteration = liveBytesAfterIteration
    }

    /// The iterations that enter the fit: everything after the warm-up.
    public var measuredBytes: [Int] { Array(liveBytesAfterIteration.dropFirst(warmupIterations)) }

    /// The growth line through the measured iterations under the standard criteria; nil with fewer than three.
    public var fit: SlopeFit? { fit(criteria: .standard) }

    /// The growth line through the measured iterations, one-off jumps left out (see `LeakAnalysis.fitGrowth`).
    public func fit(criteria: LeakCriteria) -> SlopeFit? {
        LeakAnalysis.fitGrowth(measuredBytes.map(Double.init), criteria: criteria)
    }
}

/// A straight line fitted to the live heap per iteration.
public struct SlopeFit: Sendable, Hashable, Codable {
    /// Growth of the live heap per iteration, bytes (least-squares slope).
    public var slopeBytesPerIteration: Double
    /// Half-width of the slope's 95% confidence interval, bytes per iteration (Student's t, n - 2
    /// degrees of freedom). Zero when the points lie exactly on a line.
    public var boundBytesPerIteration: Double
    /// Iterations the line was fitted to.
    public var iterations: Int
    /// Iterations whose growth was a one-off jump, replaced by the typical growth before fitting.
    public var oneOffJumps: Int
    /// What those jumps added beyond the typical growth, bytes in all (negative for drops).
    public var oneOffJumpBytes: Double

    public init(
        slopeBytesPerIteration: Double, boundBytesPerIteration: Double, iterations: Int,
        oneOffJumps: Int = 0, oneOffJumpBytes: Double = 0
    ) {
        self.slopeBytesPerIteration = slopeBytesPerIteration
        self.boundBytesPerIteration = boundBytesPerIteration
        self.iterations = iterations
        self.oneOffJumps = oneOffJumps
        self.oneOffJumpBytes = oneOffJumpBytes
    }

    /// The lowest slope the data allow at 95% confidence, bytes per iteration.
    public var lowerBoundBytesPerIteration: Double { slopeBytesPerIteration - boundBytesPerIteration }
}

/// Leak evidence of one case, measured by the harness after teardown and settle.
public struct LeakMeasurements: Sendable, Hashable, Codable {
    /// Objects registered with `track(_:as:)` over the case, per type, sorted by type name.
    public var tracked: [TypeCount]
    /// Tracked objects still alive after teardown and settle, per type, sorted by type name (leaks).
    public var survivors: [TypeCount]
    /// One series per `repeat` step, in script order.
    public var growth: [GrowthSeries]
    /// Freed bytes held in thread caches when the baseline was read, bytes (counted in `stats.allocated`;
    /// left out of the residue when `liveResidueUncertaintyBytes` is set).
    public var threadCacheBytesAtBaseline: Int
    /// Freed bytes held in thread caches when the residue was read, bytes (likewise).
    public var threadCacheBytesAtEnd: Int
    /// The residue's uncertainty when the residue is read from the live heap (thread caches left out):
    /// the harness's own allocations after the baseline plus how far back-to-back readings disagreed,
    /// bytes; nil in records whose residue still counted thread caches.
    public var liveResidueUncertaintyBytes: Int?
    /// Where the surviving objects were tracked (the stack of the `track` call, which follows their
    /// creation), when the case recorded stacks: raw return addresses, symbolized by the runner.
    public var survivorStacks: [SurvivorStack]?

    public init(
        tracked: [TypeCount] = [], survivors: [TypeCount] = [], growth: [GrowthSeries] = [],
        threadCacheBytesAtBaseline: Int = 0, threadCacheBytesAtEnd: Int = 0, survivorStacks: [SurvivorStack]? = nil,
        liveResidueUncertaintyBytes: Int? = nil
    ) {
        self.tracked = tracked
        self.survivors = survivors
        self.growth = growth
        self.threadCacheBytesAtBaseline = threadCacheBytesAtBaseline
        self.threadCacheBytesAtEnd = threadCacheBytesAtEnd
        self.survivorStacks = survivorStacks
        self.liveResidueUncertaintyBytes = liveResidueUncertaintyBytes
    }

    /// Objects tracked over the case, all types.
    public var trackedCount: Int { tracked.reduce(0) { $0 + $1.count } }
    /// Tracked objects that survived, all types.
    public var survivorCount: Int { survivors.reduce(0) { $0 + $1.count } }

    /// How far the residue may be off, bytes: `liveResidueUncertaintyBytes` when set.
    ///
    /// Otherwise (older records) both readings counted freed regions in thread caches as allocated: the
    /// live residue lies in `residue - threadCacheBytesAtEnd ... residue + threadCacheBytesAtBaseline`,
    /// inside ± the larger. Size classes are not an uncertainty of the residue (it is what the heap really
    /// holds), but the bytes the application asked for may be up to 20% lower for blocks over 128 B.
    public var residueUncertaintyBytes: Int {
        liveResidueUncertaintyBytes ?? max(threadCacheBytesAtBaseline, threadCacheBytesAtEnd)
    }
}

/// Thresholds of the leak verdict.
public struct LeakCriteria: Sendable, Hashable, Codable {
    /// Growth below this, even when significant, is not called a leak, bytes per iteration.
    public var minimumSlopeBytesPerIteration: Double
    /// An iteration whose growth differs this much from the typical iteration's (and by more than
    /// five robust standard deviations) is a one-off jump, not growth per iteration, bytes.
    public var oneOffJumpBytes: Double

    public init(minimumSlopeBytesPerIteration: Double, oneOffJumpBytes: Double = 4096) {
        self.minimumSlopeBytesPerIteration = minimumSlopeBytesPerIteration
        self.oneOffJumpBytes = oneOffJumpBytes
    }

    /// The harness's criteria: growth whose 95% lower bound exceeds 16 bytes per iteration (a
    /// leaked Swift object occupies at least one 16-byte block), after leaving out one-off jumps
    /// of over 4 KiB (a thread created mid-run allocates its 28 KiB allocator cache once).
    public static let standard = LeakCriteria(minimumSlopeBytesPerIteration: 16, oneOffJumpBytes: 4096)
}

/// Surviving tracked objects of one type that were tracked from the same place.
public struct SurvivorStack: Sendable, Hashable, Codable {
    public var typeName: String
    public var count: Int
    /// The return addresses of the `track` call's stack, innermost first (the agent's frames removed).
    public var returnAddresses: [UInt64]

    public init(typeName: String, count: Int, returnAddresses: [UInt64]) {
        self.typeName = typeName
        self.count = count
        self.returnAddresses = returnAddresses
    }
}
