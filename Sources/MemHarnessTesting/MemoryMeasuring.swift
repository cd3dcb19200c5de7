/// How a memory expectation measures: where, how often it samples, how long it lets the heap settle,
/// and how long a replica may take.
public struct MemoryMeasuring: Sendable, Hashable, Codable {
    /// Where the closure is measured (default: a replica process).
    public var isolation: MemoryIsolation
    /// Time between samples of the process-wide `stats.allocated` (default 1 ms; clamped to at least 50 µs).
    public var samplingInterval: Duration
    /// How long frees on other threads (queues, tasks) are given to land before the start, between runs and
    /// before the residue is read (default 50 ms).
    public var settle: Duration
    /// The most a replica may take, from its start to the end of the measured closure (default 120 s);
    /// past it the replica and everything it started are killed and the expectation throws.
    public var timeLimit: Duration

    /// A way of measuring; the defaults are those of `.replica`.
    public init(
        isolation: MemoryIsolation = .replica, samplingInterval: Duration = .milliseconds(1),
        settle: Duration = .milliseconds(50), timeLimit: Duration = .seconds(120)
    ) {
        self.isolation = isolation
        self.samplingInterval = samplingInterval
        self.settle = settle
        self.timeLimit = timeLimit
    }

    /// In a replica process running only the current test: honest figures while other tests run (the default).
    public static let replica = MemoryMeasuring()

    /// In this process, one expectation at a time: faster, but honest only when no other test runs meanwhile.
    public static let thisProcess = MemoryMeasuring(isolation: .thisProcess)
}
