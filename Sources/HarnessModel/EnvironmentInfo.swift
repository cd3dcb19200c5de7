/// Facts about the machine and allocator a run was measured on.
public struct EnvironmentInfo: Sendable, Hashable, Codable {
    public var toolVersion: String
    public var jemallocVersion: String
    /// jemalloc `opt.*` settings that shape the figures, by name.
    public var jemallocSettings: [String: String]
    public var swiftVersion: String
    public var operatingSystem: String
    public var kernel: String
    public var cpuModel: String
    public var cpuCount: Int
    public var memoryBytes: Int
    /// The sampling interval asked for, nanoseconds.
    public var requestedIntervalNanoseconds: Int64

    public init(
        toolVersion: String, jemallocVersion: String, jemallocSettings: [String: String], swiftVersion: String,
        operatingSystem: String, kernel: String, cpuModel: String, cpuCount: Int, memoryBytes: Int,
        requestedIntervalNanoseconds: Int64
    ) {
        self.toolVersion = toolVersion
        self.jemallocVersion = jemallocVersion
        self.jemallocSettings = jemallocSettings
        self.swiftVersion = swiftVersion
        self.operatingSystem = operatingSystem
        self.kernel = kernel
        self.cpuModel = cpuModel
        self.cpuCount = cpuCount
        self.memoryBytes = memoryBytes
        self.requestedIntervalNanoseconds = requestedIntervalNanoseconds
    }
}
