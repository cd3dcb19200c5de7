/// What the harness cannot take out of a case's peaks: the uncertainty the report states beside them.
///
/// The harness keeps its own allocations out of the case (its storage is reserved before the baseline,
/// the sampler's thread exists before it), and the allocated figure leaves out the freed blocks thread
/// caches hold. What remains is measured here, per case: what the harness still allocated after the
/// baseline, and, for sampled figures, how far two back-to-back readings of the live heap disagreed where
/// the peak was read (a thread cache filling or flushing while jemalloc summed the caches and the arenas,
/// and whatever the workload's threads allocated or freed in the microseconds between the readings).
/// Size-class rounding is not an uncertainty: it is what the heap really holds.
public struct MeasurementFloor: Sendable, Hashable, Codable {
    /// Bytes the harness allocated after the baseline on the case's thread outside the workload's calls
    /// (phase bookkeeping, built-in steps) and on the sampler's thread, bytes: at most what it adds to
    /// any figure (it counts allocations, not what stays live).
    public var harnessAllocatedBytes: Int
    /// How far the two back-to-back readings that set the sampled peak disagreed, bytes.
    public var peakReadingSpreadBytes: Int

    public init(harnessAllocatedBytes: Int, peakReadingSpreadBytes: Int) {
        self.harnessAllocatedBytes = harnessAllocatedBytes
        self.peakReadingSpreadBytes = peakReadingSpreadBytes
    }

    /// ± of the sampled peak (net), bytes: the harness's allocations plus the reading spread.
    public var peakUncertaintyBytes: Int { harnessAllocatedBytes + peakReadingSpreadBytes }

    /// ± of an exact peak (net), bytes: the harness's allocations (the exact count has no reading spread).
    public var exactPeakUncertaintyBytes: Int { harnessAllocatedBytes }

    /// ± of a phase's sampled peak, bytes; nil when the phase's reading spread is unknown.
    public func uncertaintyBytes(of phase: PhaseResult) -> Int? {
        phase.peakReadingSpreadBytes.map { harnessAllocatedBytes + $0 }
    }
}
