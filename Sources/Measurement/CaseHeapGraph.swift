import CSystem
import Foundation
import HarnessModel
import HeapGraph

#if os(Linux)
    import Glibc
#endif

/// A case's heap graph (`--heap-graph`): the heap captured in the case's own process before the baseline (what no
/// root reaches then is not the workload's), after every `repeat` iteration, at the peak and after teardown, then
/// analysed there, each capture into its bounded summary.
///
/// The capture at the peak is the agent's (`Agent.armPeakCapture`): armed after the capture before the baseline, it
/// captures at the first release past each new high of the live blocks' bytes at least `peakMargin` above the last,
/// into a file of its own that keeps the latest; disarmed before the capture after teardown. The trade-off: the
/// capture stands at most the margin below the true peak, and a heap growing from L to P bytes is captured about
/// log(P / L) / log(1 + margin) times (a larger margin: fewer captures, a capture further below the peak). Re-running
/// the case to its peak moment would find it exactly only for a workload that allocates the same way every run; this
/// needs one run. Only with `capturesIterations` (`--heap-graph`): a leak expectation's capture after teardown stays
/// as cheap as it was.
///
/// The captures go to one file while the case runs and are analysed only after the last one: an analysis allocates
/// (the graph, its names, its summary), and what it keeps would otherwise be in the next capture, growing from
/// one iteration to the next like a leak. The file has no name (O_TMPFILE): nothing of it is left whatever ends the
/// process, kill -9 included. A capture that fails is a finding of the case, never its failure.
///
/// The capturing thread's frames from the capture call up are roots (`Agent.ProgramFrames`): after an iteration the step
/// runner has zeroed the stack below its frame, where the workload's calls ran and returned, before this is called, so
/// the frames of the capture path hold no stale word of the workload; after teardown the capture runs on the main
/// thread, where no workload code ran; one the workload asks for is taken inside its own live frames.
///
/// Safety of `@unchecked Sendable`: the workload's `captureHeap` may be called from its own threads; every capture
/// and the final analysis take `lock`, and nothing else touches the entries or the file.
final class CaseHeapGraph: @unchecked Sendable {
    /// One capture taken: the `repeat` step's phase and iteration (nil for the one after teardown and for the ones a
    /// workload asks for, which carry their `label`), and where it is in the file. Storage is reserved up front, and
    /// the phase is the step's own string: keeping the list allocates nothing per capture (its growth would be in
    /// the next capture).
    private typealias Entry = (
        phase: String?, iteration: Int, label: String?, outcome: Agent.CaptureWrite?
    )
    private let lock = NSLock()
    private let request: HeapGraphRequest
    /// The captures' file (no name); -1 until the first capture, or when it could not be opened.
    private var descriptor: Int32 = -1
    private var entries: [Entry] = []
    /// The capture before the baseline, where it is in the file (nil when it was not taken).
    private var before: Agent.CaptureWrite?
    private static let beforeLabel = "before the baseline"
    private static let peakLabel = "at the peak"
    /// The capture at the peak's file (no name, one capture: the latest); -1 when it is not armed.
    private var peakDescriptor: Int32 = -1
    /// A capture at the peak is retaken when the live bytes stand this fraction above the last one's (and 1 MiB).
    static let peakMargin = 0.1
    static let peakMinimumStepBytes = 1 << 20

    init(_ request: HeapGraphRequest) {
        self.request = request
        // The harness's own: left out of every capture (a retainer of 384 KiB at the peak otherwise).
        Agent.asHarness { entries.reserveCapacity(4096) }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if peakDescriptor >= 0 { close(peakDescriptor) }
    }

    /// Before the case's baseline: what no root reaches then is not the workload's (the leak judgement subtracts it).
    /// Written to the file like the others and read after the last one.
    func captureBeforeBaseline() {
        lock.lock()
        defer { lock.unlock() }
        Agent.clearDeadStack()
        before = write(label: Self.beforeLabel)
        armPeakCapture()
    }

    /// From now on the agent captures at each new high past the margin (`--heap-graph` only); the caller holds `lock`.
    private func armPeakCapture() {
        guard request.capturesIterations, Agent.heapTrackingEnabled else { return }
        peakDescriptor = memharness_open_unnamed_file(FileManager.default.temporaryDirectory.path)
        guard peakDescriptor >= 0 else { return }
        if !Agent.armPeakCapture(
            descriptor: peakDescriptor, margin: Self.peakMargin, minimumStepBytes: Self.peakMinimumStepBytes)
        {
            close(peakDescriptor)
            peakDescriptor = -1
        }
    }

    /// After iteration `iteration` of the `repeat` step of phase `phase`: a generation, compared with the one before.
    func captureIteration(_ iteration: Int, phase: String) {
        guard request.capturesIterations else { return }
        capture((phase: phase, iteration: iteration, label: nil, outcome: nil))
    }

    /// After teardown and the settle: the last capture, then the analysis of them all, with the tracked objects
    /// that survived as types whose retaining paths are wanted.
    func captureAfterTeardown(survivors: [TypeCount]) -> HeapGraphSummary {
        let peak = peakDescriptor >= 0 ? Agent.disarmPeakCapture() : nil
        capture((phase: nil, iteration: 0, label: nil, outcome: nil))
        lock.lock()
        defer { lock.unlock() }
        return Agent.asHarness {
            symbolizeStacks(peak: peak?.capturedLiveBytes != nil)
            var summary = analyse(survivors: survivors)
            switch peak.map({ analysePeak($0, options: HeapAnalysisOptions(retainedBy: request.retainedBy)) }) {
            case .captured(let capture)?: summary.peak = capture
            case .failed(let failure)?: summary.failures.append(failure)
            case .notTaken?, nil: break
            }
            return summary
        }
    }

    /// Stopped by its memory limit, a case never tears down: its heap graph is what held its peak, the capture at the
    /// peak read and analysed now (the workload's threads still run: nothing else is captured). Nil when the capture
    /// at the peak was not armed.
    func captureAtMemoryLimit() -> HeapGraphSummary? {
        lock.lock()
        defer { lock.unlock() }
        guard peakDescriptor >= 0, let peak = Agent.disarmPeakCapture() else { return nil }
        return Agent.asHarness {
            var summary = HeapGraphSummary(captures: [])
            switch analysePeak(peak, options: HeapAnalysisOptions(retainedBy: request.retainedBy)) {
            case .captured(let capture): summary.peak = capture
            case .failed(let failure): summary.failures.append(failure)
            case .notTaken: return nil
            }
            return summary
        }
    }

    private enum PeakOutcome {
        case notTaken
        case captured(HeapPeakCapture)
        case failed(HeapCaptureFailure)
    }

    /// The capture at the peak read, named and analysed (none when no high came past the first margin), or why there is
    /// none: a finding of the case like any capture's failure. The caller holds `lock`.
    private func analysePeak(
        _ outcome: Agent.PeakCaptureOutcome, options: HeapAnalysisOptions
    ) -> PeakOutcome {
        defer {
            close(peakDescriptor)
            peakDescriptor = -1
        }
        guard let captured = outcome.capturedLiveBytes else {
            guard outcome.captures > 0 else { return .notTaken }
            return .failed(
                HeapCaptureFailure(
                    label: Self.peakLabel, reason: .other, detail: "the agent's last capture at the peak failed"))
        }
        let start = ContinuousClock.now
        let length = lseek(peakDescriptor, 0, SEEK_END)
        switch Agent.readHeapCapture(
            descriptor: peakDescriptor, extent: Agent.CaptureExtent(offset: 0, length: Int(length)),
            label: Self.peakLabel)
        {
        case .failure(let failure): return .failed(failure)
        case .snapshot(let snapshot):
            let summary = HeapAnalysis.analyse(snapshot, options: options).summary
            let elapsed = (ContinuousClock.now - start).components
            return .captured(
                HeapPeakCapture(
                    capture: summary, peakLiveBytes: outcome.peakLiveBytes, capturedLiveBytes: captured,
                    captureCount: outcome.captures, captureNanoseconds: outcome.captureNanoseconds,
                    analysisNanoseconds: elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000))
        }
    }

    /// The allocation stacks of every capture written (and of the capture at the peak, with `peak`) named in one
    /// batch before any capture is: one symbolizer process for the case, not one per capture. The caller holds `lock`.
    private func symbolizeStacks(peak: Bool) {
        // The capture before the baseline is read for its reachability alone: its stacks are not named.
        var captures = entries.map(\.outcome).compactMap { outcome -> (Int32, Agent.CaptureExtent)? in
            guard case .written(let extent)? = outcome else { return nil }
            return (descriptor, extent)
        }
        if peak, peakDescriptor >= 0 {
            captures.append(
                (peakDescriptor, Agent.CaptureExtent(offset: 0, length: Int(lseek(peakDescriptor, 0, SEEK_END)))))
        }
        Agent.symbolizeStacks(of: captures.map { (descriptor: $0.0, extent: $0.1) })
    }

    /// Every capture read, named and analysed in order; the caller holds `lock`.
    private func analyse(survivors: [TypeCount]) -> HeapGraphSummary {
        var tracker = HeapGenerationTracker(
            options: HeapAnalysisOptions(retainedBy: request.retainedBy, survivors: survivors))
        for entry in entries {
            switch entry.outcome {
            case .failed(let failure)?:
                tracker.recordFailure(failure)
            case .written(let extent)?:
                tracker.add(
                    Agent.readHeapCapture(descriptor: descriptor, extent: extent, label: Self.label(entry)),
                    isGeneration: entry.phase != nil)
            case nil:
                continue
            }
        }
        var summary = tracker.summary
        summary.unreachableBefore = unreachableBefore()
        // Read: the file's space goes back now, not at the end of the process.
        if descriptor >= 0 { ftruncate(descriptor, 0) }
        return summary
    }

    /// What no root reached in the capture before the baseline; nil when it was not taken or could not be read. Only
    /// reachability is asked of it: its blocks are named (weak and unowned references are no edges) without stacks.
    private func unreachableBefore() -> UnreachableBlocks? {
        guard case .written(let extent)? = before,
            case .snapshot(let snapshot) = Agent.readHeapCapture(
                descriptor: descriptor, extent: extent, label: Self.beforeLabel, namesStacks: false)
        else { return nil }
        return HeapAnalysis.unreachable(snapshot)
    }

    private static func label(_ entry: Entry) -> String {
        entry.label ?? entry.phase.map { "\($0) iteration \(entry.iteration)" } ?? "after teardown"
    }

    /// Where the workload asks (`CaseContext.captureHeap`): not a generation (its moment is the workload's).
    func capture(labelled label: String) {
        capture((phase: nil, iteration: -1, label: label, outcome: nil))
    }

    private func capture(_ entry: Entry) {
        lock.lock()
        defer { lock.unlock() }
        // The label is made here and freed on return: nothing of it is left for the next capture.
        var entry = entry
        entry.outcome = write(label: Self.label(entry))
        entries.append(entry)
    }

    /// One capture appended to the file (opened at the first); the caller holds `lock`.
    private func write(label: String) -> Agent.CaptureWrite {
        if descriptor < 0 { descriptor = memharness_open_unnamed_file(FileManager.default.temporaryDirectory.path) }
        guard descriptor >= 0 else {
            return .failed(
                HeapCaptureFailure(label: label, reason: .other, detail: "cannot open a capture file (errno \(errno))"))
        }
        return Agent.writeHeapCapture(appendingTo: descriptor, label: label, programFrames: .callers)
    }
}
