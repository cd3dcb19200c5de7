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

    /// The verdict of a case's heap graph: its last capture (after teardown, a program's at exit) leaks when a block
    /// no root reaches is in it. Nothing tracked and no `repeat` step needed: reachability is the evidence.
    public static func assess(heapGraph: HeapGraphSummary?, expectation: LeakExpectation?) -> LeakAssessment {
        guard let capture = heapGraph?.last else {
            let why = heapGraph?.failures.last.map { "the heap graph has no capture: \($0.detail)" }
            return LeakAssessment(
                verdict: .notAssessed, expectation: expectation, outcome: .notAssessed,
                reasons: [why ?? "no heap graph was captured"])
        }
        let verdict: LeakVerdict = capture.leakedBlocks > 0 ? .leaks : .leakFree
        return LeakAssessment(
            verdict: verdict, expectation: expectation, outcome: outcome(verdict: verdict, expectation: expectation),
            reasons: verdict == .leaks ? [reason(capture)] : [])
    }

    /// `after teardown, 60 blocks (1.27 MiB) no root reaches, in 20 cycles; the largest group a cycle through
    /// App.ProfileScreen (3 blocks, 65.1 KiB)`.
    public static func reason(_ capture: HeapCaptureSummary) -> String {
        var text = "\(capture.label), \(unreachable(capture))"
        if let group = capture.groups.first {
            let name =
                group.rootType.name.isEmpty
                ? "a block of \(group.rootType.unnamedBlockBytes ?? 0) bytes" : group.rootType.name
            let root = group.kind == .rootCycle ? "a cycle through \(name)" : name
            let blocks = group.blocks == 1 ? "1 block" : "\(group.blocks) blocks"
            text += "; the largest group \(root) (\(blocks), \(Units.formatBytes(group.bytes)))"
        }
        return text
    }

    /// What no root reaches in a capture, the one wording of that figure everywhere it is printed:
    /// `60 blocks (1.27 MiB) no root reaches, in 20 cycles` (no cycle clause without a cycle).
    public static func unreachable(_ capture: HeapCaptureSummary) -> String {
        let blocks = capture.leakedBlocks == 1 ? "1 block" : "\(capture.leakedBlocks) blocks"
        let cycles =
            capture.cycleCount == 0 ? "" : ", in \(capture.cycleCount) cycle\(capture.cycleCount == 1 ? "" : "s")"
        return "\(blocks) (\(Units.formatBytes(capture.leakedBytes))) no root reaches\(cycles)"
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
