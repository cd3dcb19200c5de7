/// What the sampler watches the footprint for on every sample, and whom it tells.
public struct FootprintWatch: Sendable {
    /// The levels and the figure compared with them.
    public var budget: MemoryBudget
    /// Called on the sampler thread when the footprint reaches the warning level while armed.
    /// It must not allocate or block (`MemoryWarnings.post()` qualifies).
    public var warn: @Sendable () -> Void
    /// Called once on the sampler thread when a sample exceeds the limit. Sampling has ended by
    /// then and the output holds every sample up to the one that crossed; it may allocate, write
    /// files and end the process. The workload keeps running meanwhile.
    public var limitExceeded: @Sendable (MemoryLimitHit, SamplerOutput) -> Void

    public init(budget: MemoryBudget, warn: @escaping @Sendable () -> Void,
                limitExceeded: @escaping @Sendable (MemoryLimitHit, SamplerOutput) -> Void) {
        self.budget = budget
        self.warn = warn
        self.limitExceeded = limitExceeded
    }
}

/// The sample at which a case's footprint exceeded its memory limit.
public struct MemoryLimitHit: Sendable, Hashable, Codable {
    /// Time of the sample, nanoseconds since the case started.
    public var timeNanoseconds: Int64
    /// The footprint that sample read, bytes.
    public var footprintBytes: Int
    /// The limit it exceeded, bytes.
    public var limitBytes: Int
    /// Which figure the footprint is.
    public var footprint: FootprintMeasure
    /// Memory warnings posted before the limit was exceeded.
    public var warningsBefore: Int

    public init(timeNanoseconds: Int64, footprintBytes: Int, limitBytes: Int, footprint: FootprintMeasure, warningsBefore: Int) {
        self.timeNanoseconds = timeNanoseconds
        self.footprintBytes = footprintBytes
        self.limitBytes = limitBytes
        self.footprint = footprint
        self.warningsBefore = warningsBefore
    }

    /// How far past the limit the footprint was when the sampler saw it, bytes.
    public var overshootBytes: Int { footprintBytes - limitBytes }
}
