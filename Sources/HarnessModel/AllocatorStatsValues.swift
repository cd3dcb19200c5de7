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
