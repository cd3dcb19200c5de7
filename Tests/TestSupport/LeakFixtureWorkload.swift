import HarnessModel
import Synchronization
import WorkloadKit

/// A workload whose two strategies leave the heap in states known by construction, for the test that drives one
/// process state through `memharness run`, `memharness profile` and `expectMemory` and asks for the same verdict:
/// `cycle` drops a ring of three objects (3 blocks no root reaches, 1 cycle), `clean` drops a chain of the same three
/// classes (all freed, nothing unreachable). Nothing is tracked and there is no `repeat` step: the heap graph is the
/// evidence on every path.
public struct LeakFixtureWorkload: Workload {
    public init() {}

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "leak-fixture", summary: "A ring of three objects dropped (cycle) or a chain of three (clean).",
            strategies: [
                StrategyDescriptor("cycle", "drops a ring of three objects: a leaked cycle"),
                StrategyDescriptor("clean", "drops a chain of three objects: nothing leaks"),
            ],
            parameters: [], steps: [StepDescriptor("build", "make the objects and drop them")], gauges: [],
            metrics: [], defaultSteps: ["build"])
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
    {
        LeakFixtureCase(strategy: strategy)
    }
}

final class LeakFixtureCase: WorkloadCase {
    let strategy: String
    init(strategy: String) { self.strategy = strategy }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        LeakFixture.build(strategy)
    }
}

/// The objects of `LeakFixtureWorkload`, made and dropped the same way wherever the strategy runs.
public enum LeakFixture {
    /// The leaked blocks and cycles `strategy` leaves: 3 and 1 for `cycle`, none for `clean`.
    public static func truth(_ strategy: String) -> (blocks: Int, cycles: Int) {
        strategy == "cycle" ? (3, 1) : (0, 0)
    }

    /// Makes the strategy's objects and drops them, on a thread of its own that has ended when this returns: a
    /// conservative scan takes any word of a live stack for a reference, and the frames that built the objects
    /// would keep what they dropped. The thread zeroes the stack those frames used before it ends: glibc hands an
    /// ended thread's stack to the next thread it starts, whose frames' unwritten slots would still hold their words.
    public static func build(_ strategy: String) {
        let closesTheRing = strategy == "cycle"
        let thread = DedicatedThread {
            link(closesTheRing)
            scrubStack(kibibytes: 32)
        }
        thread?.join()
    }

    /// Zeroes about `kibibytes` KiB of this thread's stack below the caller's frame, 1 KiB a frame.
    @inline(never) static func scrubStack(kibibytes: Int) {
        guard kibibytes > 0 else { return }
        withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 16) { bytes in
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
            lastScrubbed.store(Int(bitPattern: bytes.baseAddress), ordering: .relaxed)
        }
        scrubStack(kibibytes: kibibytes - 1)
    }

    /// The last zeroed buffer's address: it escapes, so the compiler cannot leave out the stores as dead.
    static let lastScrubbed = Atomic<Int>(0)

    @inline(never) static func link(_ closesTheRing: Bool) {
        let first = FixtureLinkA()
        let second = FixtureLinkB()
        let third = FixtureLinkC()
        first.next = second
        second.next = third
        if closesTheRing { third.next = first }
    }
}

final class FixtureLinkA { var next: FixtureLinkB? }
final class FixtureLinkB { var next: FixtureLinkC? }
final class FixtureLinkC { var next: FixtureLinkA? }
