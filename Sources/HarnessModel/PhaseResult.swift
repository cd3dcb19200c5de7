/// The figures of one phase (one step of the script) of a case.
public struct PhaseResult: Sendable, Hashable, Codable {
    /// The phase's name (the step's name, or `setup` / `teardown`).
    public var name: String
    /// Start of the phase, nanoseconds since the case started.
    public var startNanoseconds: Int64
    /// End of the phase, nanoseconds since the case started.
    public var endNanoseconds: Int64
    /// Highest allocated figure sampled during the phase (see `CaseMeasurements.peak`), absolute bytes.
    public var peakAllocatedBytes: Int
    /// Highest `stats.resident` sampled during the phase, absolute bytes.
    public var peakResidentBytes: Int
    /// Exact high-water mark of the live bytes during the phase (`--peak exact`), absolute bytes of
    /// the exact count (subtract `ExactPeakValues.baselineLiveBytes` for the net); nil when sampled only.
    public var exactPeakLiveBytes: Int?
    /// How far the two back-to-back readings that set `peakAllocatedBytes` disagreed, bytes (see
    /// `MeasurementFloor.peakReadingSpreadBytes`); nil in records written before readings were confirmed.
    public var peakReadingSpreadBytes: Int?

    public init(
        name: String, startNanoseconds: Int64, endNanoseconds: Int64, peakAllocatedBytes: Int, peakResidentBytes: Int,
        exactPeakLiveBytes: Int? = nil, peakReadingSpreadBytes: Int? = nil
    ) {
        self.name = name
        self.startNanoseconds = startNanoseconds
        self.endNanoseconds = endNanoseconds
        self.peakAllocatedBytes = peakAllocatedBytes
        self.peakResidentBytes = peakResidentBytes
        self.exactPeakLiveBytes = exactPeakLiveBytes
        self.peakReadingSpreadBytes = peakReadingSpreadBytes
    }
}
