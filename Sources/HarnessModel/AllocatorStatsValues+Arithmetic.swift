extension AllocatorStatsValues {
    /// `combine` applied to each jemalloc figure of `lhs` and `rhs`: the one place arithmetic on the values
    /// lists their six fields.
    public static func fieldwise(
        _ lhs: AllocatorStatsValues, _ rhs: AllocatorStatsValues, _ combine: (Int, Int) -> Int
    ) -> AllocatorStatsValues {
        AllocatorStatsValues(
            allocatedBytes: combine(lhs.allocatedBytes, rhs.allocatedBytes),
            activeBytes: combine(lhs.activeBytes, rhs.activeBytes),
            residentBytes: combine(lhs.residentBytes, rhs.residentBytes),
            mappedBytes: combine(lhs.mappedBytes, rhs.mappedBytes),
            retainedBytes: combine(lhs.retainedBytes, rhs.retainedBytes),
            metadataBytes: combine(lhs.metadataBytes, rhs.metadataBytes))
    }

    /// The higher of each figure of two readings, bytes (peaks of each figure, not one consistent reading).
    /// Allocates nothing: the sampler calls it on every sample. (The closures below are literals on purpose: a
    /// reference to the generic `max` or `+` is a closure with a context, allocated on every call in a debug build.)
    public func elementwiseMax(_ other: AllocatorStatsValues) -> AllocatorStatsValues {
        .fieldwise(self, other) { Swift.max($0, $1) }
    }

    /// Each figure at zero or above, bytes.
    public var clampedAtZero: AllocatorStatsValues { elementwiseMax(AllocatorStatsValues()) }

    /// The sum of two readings, figure by figure, bytes.
    public static func + (lhs: AllocatorStatsValues, rhs: AllocatorStatsValues) -> AllocatorStatsValues {
        fieldwise(lhs, rhs) { $0 + $1 }
    }

    /// The difference of two readings, figure by figure, bytes (may be negative).
    public static func - (lhs: AllocatorStatsValues, rhs: AllocatorStatsValues) -> AllocatorStatsValues {
        fieldwise(lhs, rhs) { $0 - $1 }
    }
}
