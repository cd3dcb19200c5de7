import HarnessModel
import Synchronization

/// Weak references to objects a workload expects to die; whatever is still alive after teardown
/// and settle is a leak, counted per type.
///
/// The tracker never keeps an object alive and never touches one: it only asks the runtime
/// whether each weak reference has become nil. A weak reference gives a Swift object a side
/// table (about 32 bytes) that outlives the object until the reference goes, so the tracker
/// drops references to dead objects at every `track` call: a leak-free loop then keeps the
/// tracker's own memory flat instead of showing up as growth per iteration.
public final class LifetimeTracker: Sendable {
    private struct State {
        var entries: [Entry] = []
        /// Objects tracked so far per type name, dead or alive.
        var trackedCounts: [String: Int] = [:]
    }

    private let state = Mutex(State())
    /// Captures the caller's stack at each `track` (innermost return address first); nil: stacks are not kept.
    private let captureStack: (@Sendable () -> [UInt])?

    /// Makes an empty tracker; every `CaseContext` has one. With `captureStack`, each tracked object keeps
    /// the stack it was tracked from, so a survivor can be reported with its place.
    public init(captureStack: (@Sendable () -> [UInt])? = nil) {
        self.captureStack = captureStack
    }

    /// Registers `object` as expected to die by the end of the case, under `typeName`.
    public func track(_ object: AnyObject, as typeName: String) {
        let entry = Entry(object: object, typeName: typeName, stack: captureStack?() ?? [])
        state.withLock { state in
            state.entries.removeAll { !$0.isAlive }
            state.entries.append(entry)
            state.trackedCounts[typeName, default: 0] += 1
        }
    }

    /// Objects tracked so far per type, sorted by type name.
    public func tracked() -> [TypeCount] {
        state.withLock { state in Self.sorted(state.trackedCounts) }
    }

    /// Tracked objects alive now per type, sorted by type name; types with none alive are left out.
    public func survivors() -> [TypeCount] {
        state.withLock { state in
            var counts: [String: Int] = [:]
            for entry in state.entries where entry.isAlive {
                counts[entry.typeName, default: 0] += 1
            }
            return Self.sorted(counts)
        }
    }

    /// Tracked objects alive now, grouped by type and the stack they were tracked from, largest group
    /// first; empty when stacks are not kept.
    public func survivorStacks() -> [SurvivorStack] {
        guard captureStack != nil else { return [] }
        return state.withLock { state in
            var counts: [String: [[UInt]: Int]] = [:]
            for entry in state.entries where entry.isAlive {
                counts[entry.typeName, default: [:]][entry.stack, default: 0] += 1
            }
            return counts.flatMap { type, stacks in
                stacks.map { SurvivorStack(typeName: type, count: $0.value, returnAddresses: $0.key.map(UInt64.init)) }
            }.sorted { left, right in
                if left.count != right.count { return left.count > right.count }
                if left.typeName != right.typeName { return left.typeName < right.typeName }
                return left.returnAddresses.lexicographicallyPrecedes(right.returnAddresses)
            }
        }
    }

    /// Drops every weak reference (freeing the side tables of dead objects) and the counts.
    public func removeAll() {
        state.withLock { state in state = State() }
    }

    private static func sorted(_ counts: [String: Int]) -> [TypeCount] {
        counts.map { TypeCount(typeName: $0.key, count: $0.value) }.sorted { $0.typeName < $1.typeName }
    }

    /// One weak reference and the type name it was tracked under.
    private struct Entry: @unchecked Sendable {
        // Safety: the object is never accessed through this reference; it is only loaded to test
        // for nil, and the runtime loads and clears weak references atomically from any thread.
        // Entries themselves are read and written only inside the tracker's mutex.
        weak var object: AnyObject?
        let typeName: String
        /// Where it was tracked from (innermost first); empty when stacks are not kept.
        let stack: [UInt]

        var isAlive: Bool { object != nil }
    }
}

extension CaseContext {
    /// Registers `object` as expected to die by the end of the case (`track(screen)`, or
    /// `track(screen, as: "ProfileScreen")`), under `typeName` (default: the object's dynamic type name, as
    /// `MemoryContext.track` names it).
    ///
    /// After teardown and settle, the harness counts tracked objects still alive, per type name:
    /// those are leaks. Only a weak reference is kept, so tracking never extends a lifetime.
    public func track(_ object: AnyObject, as typeName: String? = nil) {
        lifetimes.track(object, as: typeName ?? String(describing: type(of: object)))
    }
}
