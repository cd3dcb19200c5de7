/// Peaks counted at every allocation (`--peak exact`, by the agent preloaded into the case), beside the
/// sampled ones.
///
/// The count is of live blocks in size-class bytes, as `malloc_usable_size` reports them: the
/// currency of `stats.allocated`, without jemalloc's metadata and the free blocks its thread caches hold.
public struct ExactPeakValues: Sendable, Hashable, Codable {
    /// Live bytes when the case's baseline was taken, bytes.
    public var baselineLiveBytes: Int
    /// Highest live bytes from the baseline to the end of teardown, absolute bytes.
    public var peakLiveBytes: Int
    /// Allocating calls (malloc, calloc, realloc, operator new, ...) from the baseline to the end of teardown.
    public var allocationCalls: Int

    /// nil: one process's exact peak. A count: the figures of a program's process tree, summed over that many
    /// processes (each process's exact peak above its own start, added to the started process's): an upper bound
    /// of the tree's peak, which is lower when its processes did not all peak at the same moment.
    public var summedProcessCount: Int?

    public init(baselineLiveBytes: Int, peakLiveBytes: Int, allocationCalls: Int, summedProcessCount: Int? = nil) {
        self.baselineLiveBytes = baselineLiveBytes
        self.peakLiveBytes = peakLiveBytes
        self.allocationCalls = allocationCalls
        self.summedProcessCount = summedProcessCount
    }

    /// The exact peak above the baseline, bytes: what the scenario added at its worst, every spike included.
    public var peakNetBytes: Int { peakLiveBytes - baselineLiveBytes }
}
