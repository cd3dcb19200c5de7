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

/// Whether a case (or a strategy) leaked.
public enum LeakVerdict: String, Sendable, Hashable, Codable {
    /// Evidence was gathered (tracked objects or a `repeat` step) and none showed a leak.
    case leakFree = "leak-free"
    /// A tracked object survived, or the live heap grew per iteration beyond the confidence bound.
    case leaks
    /// Nothing was tracked and no `repeat` step ran: the case gives no leak evidence either way.
    case notAssessed = "not-assessed"
}

/// How the verdict relates to what the scenario file expected.
public enum LeakOutcome: String, Sendable, Hashable, Codable {
    /// The verdict matches the expectation (or no leak was seen where none was stated).
    case asExpected = "as-expected"
    /// A strategy expected (or not declared) to be leak-free leaked: a finding.
    case unexpectedLeak = "unexpected-leak"
    /// A strategy declared `expect: leaks` showed no leak: the scenario may no longer show the pitfall.
    case expectedLeakNotSeen = "expected-leak-not-seen"
    /// No leak evidence was gathered.
    case notAssessed = "not-assessed"
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

/// The verdict of one case with its reasons, in plain words.
public struct LeakAssessment: Sendable, Hashable, Codable {
    public var verdict: LeakVerdict
    public var expectation: LeakExpectation?
    public var outcome: LeakOutcome
    /// Why the verdict is what it is (`20 ProfileScreen survived`, `growth 80.0 KiB ± 12 B per iteration`).
    public var reasons: [String]

    public init(verdict: LeakVerdict, expectation: LeakExpectation?, outcome: LeakOutcome, reasons: [String]) {
        self.verdict = verdict
        self.expectation = expectation
        self.outcome = outcome
        self.reasons = reasons
    }

    /// True when the case is a finding that should fail a run (an unexpected leak).
    public var isFinding: Bool { outcome == .unexpectedLeak }
}

/// Pure functions behind the leak verdict: the slope fit, the confidence bound, the verdict.
public enum LeakAnalysis {
    /// Fits `value = intercept + slope * index` by least squares to `values` (one per iteration).
    ///
    /// Returns nil with fewer than three values: two points always lie on a line, so there is no
    /// spread left to bound the slope with.
    public static func fitSlope(_ values: [Double]) -> SlopeFit? {
        let n = values.count
        guard n >= 3, let line = LinearFit.leastSquares(values.enumerated().map { (Double($0.offset), $0.element) })
        else {
            return nil
        }
        let slope = line.slope
        let meanX = Double(n - 1) / 2
        var sxx = 0.0
        var squaredResiduals = 0.0
        for (index, value) in values.enumerated() {
            let x = Double(index)
            sxx += (x - meanX) * (x - meanX)
            let residual = value - line.value(at: x)
            squaredResiduals += residual * residual
        }
        let degreesOfFreedom = n - 2
        let standardError = (squaredResiduals / Double(degreesOfFreedom) / sxx).squareRoot()
        let bound = studentT975(degreesOfFreedom: degreesOfFreedom) * standardError
        return SlopeFit(slopeBytesPerIteration: slope, boundBytesPerIteration: bound, iterations: n)
    }

    /// Fits the growth line to the live heap per iteration, leaving out one-off jumps first.
    ///
    /// Something allocated once at a random iteration and kept (a thread that starts mid-run and
    /// gets its allocator cache, a lazily built table) is a step in the series, and a least-squares
    /// line through a step has a significant slope. Growth per iteration is what happens in every
    /// iteration, so increments far from the median increment (up, or down when such a thread
    /// exits) are replaced by the median before the line is fitted, and reported as `oneOffJumps`.
    /// At most a quarter of the increments are treated so; beyond that the jumps are the pattern
    /// and stay in. Growth that comes only in rare large jumps (an array of leaked entries doubling
    /// its storage) is left out this way; tracked survivors and the residue still show it.
    public static func fitGrowth(_ values: [Double], criteria: LeakCriteria = .standard) -> SlopeFit? {
        let (levelled, jumps, jumpBytes) = removeOneOffJumps(values, criteria: criteria)
        guard var fit = fitSlope(levelled) else { return nil }
        fit.oneOffJumps = jumps
        fit.oneOffJumpBytes = jumpBytes
        return fit
    }

    /// `values` with every one-off jump replaced by the median increment, the number of jumps and
    /// their excess bytes in all (see `fitGrowth`).
    public static func removeOneOffJumps(_ values: [Double], criteria: LeakCriteria = .standard)
        -> (values: [Double], jumps: Int, jumpBytes: Double)
    {
        guard values.count >= 3 else { return (values, 0, 0) }
        let increments = zip(values.dropFirst(), values).map { $0 - $1 }
        guard let median = Statistics.median(increments),
            let deviation = Statistics.median(increments.map { abs($0 - median) })
        else { return (values, 0, 0) }
        // 1.4826 x the median absolute deviation estimates the standard deviation of normal noise.
        let threshold = max(5 * 1.4826 * deviation, criteria.oneOffJumpBytes)
        let isJump = increments.map { abs($0 - median) > threshold }
        let jumps = isJump.filter { $0 }.count
        guard jumps > 0, jumps * 4 <= increments.count else { return (values, 0, 0) }
        var levelled = [values[0]]
        levelled.reserveCapacity(values.count)
        var jumpBytes = 0.0
        for (index, increment) in increments.enumerated() {
            if isJump[index] { jumpBytes += increment - median }
            levelled.append(levelled[index] + (isJump[index] ? median : increment))
        }
        return (levelled, jumps, jumpBytes)
    }

    /// The 97.5% quantile of Student's t distribution (the factor of a two-sided 95% interval).
    ///
    /// Exact table values up to 30 degrees of freedom; beyond, the Cornish-Fisher expansion
    /// around the normal quantile, within 0.001 of the true value.
    public static func studentT975(degreesOfFreedom: Int) -> Double {
        let table: [Double] = [
            12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
            2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
            2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
        ]
        // Zero or negative degrees of freedom have no interval; the widest tabled factor is the safe side.
        guard degreesOfFreedom >= 1 else { return table[0] }
        if degreesOfFreedom <= table.count { return table[degreesOfFreedom - 1] }
        let z = 1.959964
        let v = Double(degreesOfFreedom)
        let z3 = z * z * z
        let z5 = z3 * z * z
        return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v)
    }

    /// True when `fit` shows growth: its 95% lower bound is above the criteria's minimum.
    public static func isGrowing(_ fit: SlopeFit, criteria: LeakCriteria = .standard) -> Bool {
        fit.lowerBoundBytesPerIteration > criteria.minimumSlopeBytesPerIteration
    }

    /// The verdict of one case from its measurements and the file's expectation.
    ///
    /// A survivor of any tracked type is a leak; so is a `repeat` step whose live heap grows
    /// beyond the confidence bound, even when no tracked object survived. The residue is reported
    /// but does not decide: it also holds what the modelled system keeps on purpose. Without an
    /// expectation a leak counts as unexpected (a finding), since a leak is a defect unless the
    /// file says the strategy demonstrates one.
    public static func assess(
        _ measurements: LeakMeasurements?, expectation: LeakExpectation?,
        criteria: LeakCriteria = .standard
    ) -> LeakAssessment {
        guard let measurements, measurements.trackedCount > 0 || !measurements.growth.isEmpty else {
            return LeakAssessment(
                verdict: .notAssessed, expectation: expectation, outcome: .notAssessed,
                reasons: ["nothing tracked and no repeat step"])
        }
        var reasons: [String] = []
        for survivor in measurements.survivors where survivor.count > 0 {
            let tracked = measurements.tracked.first { $0.typeName == survivor.typeName }?.count
            reasons.append(
                "\(survivor.count)\(tracked.map { " of \($0)" } ?? "") \(survivor.typeName) survived teardown")
        }
        for series in measurements.growth {
            guard let fit = series.fit(criteria: criteria), isGrowing(fit, criteria: criteria) else { continue }
            reasons.append("\(series.phase): live heap grows \(formatSlope(fit)) per iteration")
        }
        let verdict: LeakVerdict = reasons.isEmpty ? .leakFree : .leaks
        return LeakAssessment(
            verdict: verdict, expectation: expectation,
            outcome: outcome(verdict: verdict, expectation: expectation), reasons: reasons)
    }

    /// How a verdict relates to an expectation.
    public static func outcome(verdict: LeakVerdict, expectation: LeakExpectation?) -> LeakOutcome {
        switch (verdict, expectation) {
        case (.notAssessed, _): return .notAssessed
        case (.leaks, .leaks): return .asExpected
        case (.leaks, _): return .unexpectedLeak
        case (.leakFree, .leaks): return .expectedLeakNotSeen
        case (.leakFree, _): return .asExpected
        }
    }

    /// A slope and its bound as `80.00 KiB ± 12 B`.
    public static func formatSlope(_ fit: SlopeFit) -> String {
        "\(Units.formatBytes(fit.slopeBytesPerIteration)) ± \(Units.formatBytes(fit.boundBytesPerIteration))"
    }
}

extension CaseResult {
    /// This case's leak verdict under the standard criteria (not assessed unless the case completed).
    public var leakAssessment: LeakAssessment {
        LeakAnalysis.assess(completed?.leaks, expectation: expectation)
    }
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
