import HarnessModel

/// What a case, a strategy's case or a closure shows about leaks: the one input of the leak judgement.
///
/// Three kinds, each possibly absent: the objects a workload tracked and those that survived, the live heap after
/// each iteration of a `repeat` step (or each run of a closure), and a heap capture with what no root reached before
/// the work began. `init(case:)` makes it for a case of `run` or `profile`, `strategy(_:cases:instrumented:)` for a
/// strategy's cases, and MemHarnessTesting from an expectation's figures: the judgement is the same for all.
public struct LeakEvidence: Sendable, Hashable {
    /// Which case the evidence is from; the judgement counts repetitions apart.
    public enum Source: Sendable, Hashable {
        /// A measured repetition of a strategy (numbered from 1).
        case repetition(Int)
        /// A strategy's instrumented case (its heap graph).
        case instrumented
        /// A closure measured by `expectMemory`.
        case closure
    }

    public var source: Source
    /// Objects tracked per type.
    public var tracked: [TypeCount]
    /// Tracked objects still alive at the end, per type.
    public var survivors: [TypeCount]
    /// The live heap per iteration of each `repeat` step (or per run of a closure).
    public var growth: [GrowthSeries]
    /// The heap graph; nil when none was asked for.
    public var heap: HeapEvidence?

    public init(
        source: Source, tracked: [TypeCount] = [], survivors: [TypeCount] = [], growth: [GrowthSeries] = [],
        heap: HeapEvidence? = nil
    ) {
        self.source = source
        self.tracked = tracked
        self.survivors = survivors
        self.growth = growth
        self.heap = heap
    }

    /// The evidence of `measurements` (tracked objects and growth), with `heap` when a heap graph was asked for.
    public init(source: Source, measurements: LeakMeasurements?, heap: HeapEvidence? = nil) {
        self.init(
            source: source, tracked: measurements?.tracked ?? [], survivors: measurements?.survivors ?? [],
            growth: measurements?.growth ?? [], heap: heap)
    }

    /// True when anything was gathered that can show a leak or its absence: an object tracked, a growth series, a
    /// heap capture.
    public var isAssessable: Bool {
        tracked.contains { $0.count > 0 } || !growth.isEmpty || heap?.capture != nil
    }
}

/// The heap graph as leak evidence: the capture judged and what no root reached already before the work began.
public struct HeapEvidence: Sendable, Hashable {
    /// The capture judged: a case's last (after teardown, a program's at exit) or a closure's; nil when none was
    /// taken.
    public var capture: HeapCaptureSummary?
    /// Why there is no capture, when one was recorded.
    public var failure: HeapCaptureFailure?
    /// What no root reached before: at a workload case's baseline, before a closure; nothing for a program (its
    /// process starts with an empty heap) or where it is not known.
    public var before: UnreachableBlocks
    /// The known leaks suppressions left out (`suppressing(_:)`): not counted in `new`.
    public var suppressed = SuppressedLeaks.none

    public init(capture: HeapCaptureSummary?, failure: HeapCaptureFailure? = nil, before: UnreachableBlocks = .none) {
        self.capture = capture
        self.failure = failure
        self.before = before
    }

    /// A case's heap graph: its last capture (or its last failure), less what no root reached before the case's work.
    public init(_ summary: HeapGraphSummary?) {
        self.init(
            capture: summary?.last, failure: summary?.last == nil ? summary?.failures.last : nil,
            before: summary?.unreachableBefore ?? .none)
    }

    /// What no root reaches in the capture and reached before: the blocks, bytes and cycles the work left unreachable.
    /// Nothing without a capture. The subtraction is by count: a block no root reaches cannot be freed, so the ones
    /// unreachable before are still among the capture's.
    /// Known leaks a suppression matches are left out too.
    public var new: UnreachableBlocks {
        guard let capture else { return .none }
        let left = suppressed.unreachable
        return UnreachableBlocks(
            blocks: max(0, capture.leakedBlocks - before.blocks - left.blocks),
            bytes: max(0, capture.leakedBytes - before.bytes - left.bytes),
            cycles: max(0, capture.cycleCount - before.cycles - left.cycles))
    }

    /// This evidence with the capture's leak groups that `suppressions` match left out (`SuppressedLeaks`).
    public func suppressing(_ suppressions: [LeakSuppression]) -> HeapEvidence {
        guard let capture, !suppressions.isEmpty else { return self }
        var evidence = self
        evidence.suppressed = SuppressedLeaks(capture, suppressions: suppressions)
        return evidence
    }
}

extension LeakEvidence {
    /// A case's evidence. A case that captured its heap (an instrumented case) is judged by its heap graph, what it was
    /// instrumented for (its own byte figures hold the instrumentation's allocations); every other case by its tracked
    /// objects and `repeat` steps. A case that did not complete gives no evidence.
    public init(case result: CaseResult) {
        let source: Source = result.isInstrumented ? .instrumented : .repetition(result.repetition)
        guard let measurements = result.completed else {
            self.init(source: source)
            return
        }
        if result.isInstrumented, let heapGraph = measurements.heapGraph {
            self.init(source: source, heap: HeapEvidence(heapGraph))
        } else {
            self.init(source: source, measurements: measurements.leaks)
        }
    }

    /// A strategy's evidence: each completed measured repetition's, then the heap graph of its instrumented case when
    /// one captured the heap (a heap graph is asked for once per strategy).
    public static func strategy(_ strategy: String, cases: [CaseResult], instrumented: [CaseResult]) -> [LeakEvidence] {
        let measured = cases.filter { $0.strategy == strategy && $0.completed != nil }.map { LeakEvidence(case: $0) }
        let heapCase = instrumented.first { $0.strategy == strategy && $0.measurements?.heapGraph != nil }
        return measured
            + (heapCase.map { [LeakEvidence(source: .instrumented, heap: HeapEvidence($0.completed?.heapGraph))] }
                ?? [])
    }
}
