import HarnessModel
import HeapGraph
import Measurement
import Verdicts

/// What the heap graph said of a closure (`leaks: .none`, measured in a replica with the agent preloaded): the heap
/// captured after the closure and a settle, and how many blocks no root reached already before it.
///
/// A block no root reaches after the closure that was not unreachable before is the closure's leak, found with
/// nothing tracked: a retain cycle, a lost pointer. The test process's own unreachable blocks (if its runtime has any)
/// are counted before and left out.
public struct HeapGraphLeaks: Sendable, Hashable, Codable {
    /// The capture after the closure: live and leaked blocks, the leak groups and their cycles.
    public var capture: HeapCaptureSummary
    /// What no root reached in the capture before the closure: blocks, bytes, cycles.
    public var before: UnreachableBlocks

    public init(capture: HeapCaptureSummary, before: UnreachableBlocks) {
        self.capture = capture
        self.before = before
    }

    /// The heap graph as leak evidence: the capture, less what no root reached before the closure.
    public var evidence: HeapEvidence { HeapEvidence(capture: capture, before: before) }

    /// Blocks no root reached in the capture before the closure.
    public var leakedBlocksBefore: Int { before.blocks }

    /// Blocks the closure left unreachable.
    public var newLeakedBlocks: Int { evidence.new.blocks }
}

/// Captures for `leaks: .none` in a replica: the agent stops the process's other threads, writes the heap, and this
/// thread names and analyses it. Allocates freely: called before the baseline and after the residue only.
enum HeapGraphCheck {
    /// True when the agent tracks this process's blocks (a replica started with it preloaded).
    static var isAvailable: Bool { Agent.heapTrackingEnabled }

    /// The capture now, analysed; nil when it failed (said in `failure`). The caller has zeroed the dead stack below the
    /// frame that ran the closure (`Agent.clearDeadStack`): this thread's frames from here up are roots.
    static func capture(label: String) -> (summary: HeapCaptureSummary?, failure: String?) {
        switch Agent.captureHeap(label: label, programFrames: .callers) {
        case .snapshot(let snapshot): return (Agent.asHarness { HeapAnalysis.analyse(snapshot).summary }, nil)
        case .failure(let failure): return (nil, failure.detail)
        }
    }
}
