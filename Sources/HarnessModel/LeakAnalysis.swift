/// The growth fits the leak judgement reads (Verdicts' `LeakJudgement`): the slope fit, its confidence bound, one-off
/// jumps left out. Evidence only: whether a fit is a leak is the judgement's.
public enum LeakAnalysis {
    /// Fits `value = intercept + slope * index` by least squares to `values` (one per iteration).
    ///
    /// Returns nil with fewer than three values: two points always lie on a line, so there is no
    /// spread left to bound the slope with.
    public static func fitSlope(_ values: [Double]) -> SlopeFit? {
        let points = values.enumerated().map { (x: Double($0.offset), y: $0.element) }
        guard let line = LinearFit.leastSquares(points), let bound = line.slopeBound95(of: points) else { return nil }
        return SlopeFit(slopeBytesPerIteration: line.slope, boundBytesPerIteration: bound, iterations: values.count)
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
}
