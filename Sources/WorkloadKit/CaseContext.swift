import HarnessModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A scenario-specific number the sampler records beside memory (queue depth, items retained).
///
/// Setting it is one relaxed atomic store: cheap enough for a workload's hot path.
public final class Gauge: Sendable {
    /// The gauge's name, as declared by the workload.
    public let name: String
    private let storage = Atomic<Int64>(0)

    init(name: String) {
        self.name = name
    }

    /// The current value.
    public var value: Int64 { storage.load(ordering: .relaxed) }

    /// Sets the value.
    public func set(_ value: Int64) { storage.store(value, ordering: .relaxed) }

    /// Adds `delta` (may be negative).
    public func add(_ delta: Int64) { storage.add(delta, ordering: .relaxed) }

    /// Adds one.
    public func increment() { add(1) }

    /// Subtracts one.
    public func decrement() { add(-1) }
}

/// What the harness hands a running case: gauges, the case clock, a scratch directory.
public final class CaseContext: Sendable {
    /// The strategy being run.
    public let strategy: String
    /// Repetition number, from 1.
    public let repetition: Int
    /// A fresh directory for files the case creates (removed after the case).
    public let scratchDirectory: String
    /// Gauges in the workload's declaration order; the sampler reads them.
    public let gauges: [Gauge]
    /// Memory warnings of this case (see `onMemoryWarning`).
    public let memoryWarnings = MemoryWarnings()
    /// When the context was made, `MonotonicClock` nanoseconds.
    private let startNanoseconds: Int64
    /// Objects the workload expects to die by the end of the case (see `track(_:as:)`).
    public let lifetimes: LifetimeTracker
    /// The harness's heap capture (`--heap-graph`); nil when the case does not capture its heap.
    private let heapCapture: (@Sendable (String) -> Void)?

    /// Makes a context; the harness does this, and tests of workloads may too. `captureStack` (the harness's,
    /// when it records allocation stacks) gives every tracked object the stack it was tracked from.
    /// `heapCapture` (the harness's, when the case captures its heap) takes `captureHeap(_:)`'s captures.
    public init(
        strategy: String, repetition: Int = 1, gaugeNames: [String], scratchDirectory: String = "/tmp",
        captureStack: (@Sendable () -> [UInt])? = nil, heapCapture: (@Sendable (String) -> Void)? = nil
    ) {
        lifetimes = LifetimeTracker(captureStack: captureStack)
        self.heapCapture = heapCapture
        self.strategy = strategy
        self.repetition = repetition
        self.scratchDirectory = scratchDirectory
        gauges = gaugeNames.map(Gauge.init(name:))
        startNanoseconds = MonotonicClock.nanoseconds()
    }

    /// A context whose tracked objects go to `lifetimes`, a tracker its caller reads: `expectMemory(of:strategy:)`
    /// hands a workload the tracker its `leaks:` judges.
    package init(strategy: String, gaugeNames: [String], scratchDirectory: String, lifetimes: LifetimeTracker) {
        self.lifetimes = lifetimes
        heapCapture = nil
        self.strategy = strategy
        repetition = 1
        self.scratchDirectory = scratchDirectory
        gauges = gaugeNames.map(Gauge.init(name:))
        startNanoseconds = MonotonicClock.nanoseconds()
    }

    /// Captures the heap as a graph now, labelled `label` (up to 63 bytes), beside the captures after every
    /// `repeat` iteration and after teardown: its leaks, cycles and types appear in the report. Does nothing unless
    /// the run captures heaps (`--heap-graph`, in the instrumented case). Call it from a step, not concurrently.
    public func captureHeap(_ label: String) { heapCapture?(label) }

    /// A declared gauge by name. Asking for an undeclared gauge is a programming error of the workload.
    public func gauge(_ name: String) -> Gauge {
        guard let gauge = gauges.first(where: { $0.name == name }) else {
            preconditionFailure("gauge '\(name)' is not declared by the workload; declared: \(gauges.map(\.name))")
        }
        return gauge
    }

    /// Time since the case's context was made.
    public var elapsed: Duration { .nanoseconds(elapsedNanoseconds) }

    /// Time since the case's context was made, nanoseconds.
    public var elapsedNanoseconds: Int64 { MonotonicClock.nanoseconds() - startNanoseconds }
}
