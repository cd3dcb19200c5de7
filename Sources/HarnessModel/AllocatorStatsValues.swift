/// The jemalloc figures as plain values (mirrors the probe's `AllocatorStats`, which reports do not import).
public struct AllocatorStatsValues: Sendable, Hashable, Codable {
    public var allocatedBytes: Int = 0
    public var activeBytes: Int = 0
    public var residentBytes: Int = 0
    public var mappedBytes: Int = 0
    public var retainedBytes: Int = 0
    public var metadataBytes: Int = 0

    public init(
        allocatedBytes: Int = 0, activeBytes: Int = 0, residentBytes: Int = 0,
        mappedBytes: Int = 0, retainedBytes: Int = 0, metadataBytes: Int = 0
    ) {
        self.allocatedBytes = allocatedBytes
        self.activeBytes = activeBytes
        self.residentBytes = residentBytes
        self.mappedBytes = mappedBytes
        self.retainedBytes = retainedBytes
        self.metadataBytes = metadataBytes
    }
}

extension AllocatorStatsValues {
    /// The element-wise maximum of two readings (peaks of each figure, not one consistent reading).
    public func elementwiseMax(_ other: AllocatorStatsValues) -> AllocatorStatsValues {
        AllocatorStatsValues(
            allocatedBytes: max(allocatedBytes, other.allocatedBytes), activeBytes: max(activeBytes, other.activeBytes),
            residentBytes: max(residentBytes, other.residentBytes), mappedBytes: max(mappedBytes, other.mappedBytes),
            retainedBytes: max(retainedBytes, other.retainedBytes),
            metadataBytes: max(metadataBytes, other.metadataBytes))
    }
}
