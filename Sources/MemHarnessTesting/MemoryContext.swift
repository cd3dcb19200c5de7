import HarnessModel
import Synchronization
import WorkloadKit

/// What a measured closure is handed: a way to name the objects it expects to die by its end.
///
/// `context.track(screen)` keeps only a weak reference, so tracking never extends a lifetime. After the
/// closure's last run and a settle, every tracked object still alive is a survivor, counted per type name;
/// with `leaks: .none` a survivor fails the expectation.
public final class MemoryContext: Sendable {
    /// The tracked objects (weak references), shared with the harness's case context.
    let lifetimes = LifetimeTracker()
    private let runIndex = Atomic<Int>(0)
    /// The live heap after each iteration of a workload's `repeat` steps (`expectMemory(of:strategy:)`), judged
    /// with the runs' own growth by `leaks:`.
    let repeatGrowth = Mutex<[GrowthSeries]>([])

    /// A context for one expectation (the expectation makes it; tests of workloads may too).
    public init() {}

    /// Registers `object` as expected to die by the end of the closure, under `typeName` (default: the
    /// object's dynamic type name, such as `ProfileScreen`).
    public func track(_ object: AnyObject, as typeName: String? = nil) {
        lifetimes.track(object, as: typeName ?? String(describing: type(of: object)))
    }

    /// The run in progress, from 1 (the closure runs `iterations` times).
    public var run: Int { runIndex.load(ordering: .relaxed) }

    /// Enters run `index` (from 1).
    func enterRun(_ index: Int) { runIndex.store(index, ordering: .relaxed) }
}
