import Foundation
import HarnessModel
import HeapGraph

/// A case's heap graph (`--heap-graph`): the heap captured in the case's own process before the baseline (what no
/// root reaches then is not the workload's), after every `repeat` iteration and after teardown, then analysed there,
/// each capture into its bounded summary.
///
/// The captures go to files while the case runs and are analysed only after the last one: an analysis allocates
/// (the graph, its names, its summary), and what it keeps would otherwise be in the next capture, growing from
/// one iteration to the next like a leak. A capture that fails is a finding of the case, never its failure.
///
/// Safety of `@unchecked Sendable`: the workload's `captureHeap` may be called from its own threads; every capture
/// and the final analysis take `lock`, and nothing else touches the entries.
final class CaseHeapGraph: @unchecked Sendable {
    /// One capture taken: the `repeat` step's phase and iteration (nil for the one after teardown and for the ones a
    /// workload asks for, which carry their `label`). Storage is reserved up front, and the phase is the step's own
    /// string: keeping the list allocates nothing per capture (its growth would be in the next capture).
    private typealias Entry = (phase: String?, iteration: Int, label: String?, failure: HeapCaptureFailure?)
    private let lock = NSLock()
    private let request: HeapGraphRequest
    private let folder: String
    private var entries: [Entry] = []
    /// The capture before the baseline: taken, and why it failed when it did.
    private var capturedBefore = false
    private var beforeFailure: HeapCaptureFailure?
    private var beforePath: String { "\(folder)/before.heap" }
    private static let beforeLabel = "before the baseline"

    init(_ request: HeapGraphRequest) {
        self.request = request
        folder =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("memharness-heap-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        entries.reserveCapacity(4096)
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// Before the case's baseline: what no root reaches then is not the workload's (the leak judgement subtracts it).
    /// Written to a file like the others and read after the last one.
    func captureBeforeBaseline() {
        lock.lock()
        defer { lock.unlock() }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        Agent.clearDeadStack()
        beforeFailure = Agent.writeHeapCapture(to: beforePath, label: Self.beforeLabel)
        capturedBefore = true
    }

    /// After iteration `iteration` of the `repeat` step of phase `phase`: a generation, compared with the one before.
    func captureIteration(_ iteration: Int, phase: String) {
        guard request.capturesIterations else { return }
        capture((phase, iteration, nil, nil))
    }

    /// After teardown and the settle: the last capture, then the analysis of them all, with the tracked objects
    /// that survived as types whose retaining paths are wanted.
    func captureAfterTeardown(survivors: [TypeCount]) -> HeapGraphSummary {
        capture((nil, 0, nil, nil))
        lock.lock()
        defer { lock.unlock() }
        var tracker = HeapGenerationTracker(
            options: HeapAnalysisOptions(retainedBy: request.retainedBy, survivors: survivors))
        for (index, entry) in entries.enumerated() {
            if let failure = entry.failure {
                tracker.recordFailure(failure)
                continue
            }
            tracker.add(
                Agent.readHeapCapture(at: path(index), label: Self.label(entry)), isGeneration: entry.phase != nil)
            try? FileManager.default.removeItem(atPath: path(index))
        }
        var summary = tracker.summary
        summary.unreachableBefore = unreachableBefore()
        return summary
    }

    /// What no root reached in the capture before the baseline; nil when it was not taken or could not be read.
    private func unreachableBefore() -> UnreachableBlocks? {
        guard capturedBefore, beforeFailure == nil else { return nil }
        defer { try? FileManager.default.removeItem(atPath: beforePath) }
        guard case .snapshot(let snapshot) = Agent.readHeapCapture(at: beforePath, label: Self.beforeLabel) else {
            return nil
        }
        return UnreachableBlocks(HeapAnalysis.analyse(snapshot).summary)
    }

    private static func label(_ entry: Entry) -> String {
        entry.label ?? entry.phase.map { "\($0) iteration \(entry.iteration)" } ?? "after teardown"
    }

    private func path(_ index: Int) -> String { "\(folder)/\(index + 1).heap" }

    /// Where the workload asks (`CaseContext.captureHeap`): not a generation (its moment is the workload's).
    func capture(labelled label: String) {
        capture((nil, -1, label, nil))
    }

    private func capture(_ entry: Entry) {
        lock.lock()
        defer { lock.unlock() }
        if entries.isEmpty && !capturedBefore {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        Agent.clearDeadStack()
        // The path and label are made here and freed on return: nothing of them is left for the next capture.
        var entry = entry
        entry.failure = Agent.writeHeapCapture(to: path(entries.count), label: Self.label(entry))
        entries.append(entry)
    }
}
