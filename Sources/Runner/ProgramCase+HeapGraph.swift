import Foundation
import HarnessModel
import HeapGraph
import Measurement

extension ProgramCase {
    /// Where the agent in the program writes its heap capture at exit (`heap.<pid>`; every process of the tree
    /// that exits normally writes its own).
    var heapCapturePattern: String { "\(work.root)/heap.%p" }

    /// The capture process `pid` writes at its exit.
    func heapCapturePath(of pid: Int32) -> String { "\(work.root)/heap.\(pid)" }

    /// A tracker for the case's captures, analysed with the case's options.
    var heapTracker: HeapGenerationTracker {
        HeapGenerationTracker(options: HeapAnalysisOptions(retainedBy: spec.heapGraph?.retainedBy ?? []))
    }

    /// The heap graph of the program started as `pid`: its capture at exit, analysed here, its blocks named from
    /// `memory`: the program's own while it is held at its exit (`ExitHold`), else nothing but its files' symbols.
    /// `generations`: the captures taken while it ran (a server's between load rounds), which the one at exit follows.
    func heapGraphAtExit(
        pid: Int32, termination: TerminationStatus? = nil, memory: CaptureMemory = .none,
        generations: HeapGenerationTracker? = nil
    ) -> HeapGraphSummary {
        let label = "at exit"
        let path = heapCapturePath(of: pid)
        var tracker = generations ?? heapTracker
        guard FileManager.default.fileExists(atPath: path) else {
            let why: String
            switch termination {
            case .signaled(let signal)?: why = "it was ended by signal \(signal) (\(SignalNames.name(of: signal)))"
            case nil: why = "it was stopped at its time limit"
            case .exited?: why = "it ended before the agent's exit handler ran (a crash in another exit handler)"
            }
            tracker.recordFailure(
                HeapCaptureFailure(
                    label: label, reason: .other, detail: "the program's heap was not captured at exit: \(why)"))
            var summary = tracker.summary
            summary.unreachableBefore = nil
            return summary
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        tracker.add(Agent.readHeapCapture(at: path, label: label, memory: memory), isGeneration: false)
        var summary = tracker.summary
        // The program's process started with an empty heap: no capture before its work, nothing to subtract.
        summary.unreachableBefore = nil
        return summary
    }
}
