import HarnessModel

/// A heap capture: the named graph, or why there is none (a finding of the case, not an error).
public enum HeapCaptureResult: Sendable {
    case snapshot(HeapSnapshot)
    case failure(HeapCaptureFailure)
}

/// A case's captures analysed one at a time, in order, into its `HeapGraphSummary`.
///
/// Only one snapshot is held at a time (a million-block heap is tens of MiB): each is analysed as it comes,
/// and only its bounded summary and its type census are kept. Types that grew in every generation so far are
/// suspects, and each capture gets their retaining paths besides the ones the options ask for: paths to the blocks
/// of the type that were not live at the previous generation (the blocks that grew). The previous generation's
/// addresses are kept for that (8 bytes a block).
public struct HeapGenerationTracker: Sendable {
    /// The targets and limits every capture is analysed with (suspects are added per capture).
    public var options: HeapAnalysisOptions
    private var captures: [HeapCaptureSummary] = []
    private var generations: [HeapTypeCensus] = []
    private var failures: [HeapCaptureFailure] = []
    /// The live addresses of the last generation capture: what a growing type's paths compare with.
    private var previousGeneration: ContiguousArray<UInt64>?

    public init(options: HeapAnalysisOptions = HeapAnalysisOptions()) {
        self.options = options
    }

    /// Analyses the next capture. `isGeneration`: it is compared with the previous generation (an iteration
    /// of a `repeat` step); a capture after teardown usually is not.
    @discardableResult
    public mutating func add(_ snapshot: HeapSnapshot, isGeneration: Bool = true) -> HeapCaptureSummary {
        let census = HeapTypeCensus(snapshot)
        if isGeneration { generations.append(census) }
        let suspects = HeapAnalysis.growth(generations, limit: Int.max).0.filter(\.isSuspect)
        var options = options
        options.targets += suspects.map { .exactType($0.type, reason: .growingType) }
        options.previousGeneration = previousGeneration
        let summary = HeapAnalysis.analyse(snapshot, options: options, census: census).summary
        captures.append(summary)
        if isGeneration { previousGeneration = snapshot.addresses }
        return summary
    }

    /// Records a capture that could not be taken or read.
    public mutating func recordFailure(_ failure: HeapCaptureFailure) {
        failures.append(failure)
    }

    /// Analyses the next capture when there is one (`add(_:isGeneration:)`), else records why not.
    public mutating func add(_ result: HeapCaptureResult, isGeneration: Bool) {
        switch result {
        case .snapshot(let snapshot): add(snapshot, isGeneration: isGeneration)
        case .failure(let failure): recordFailure(failure)
        }
    }

    /// Everything so far: the captures, the growth between generations, the failures.
    public var summary: HeapGraphSummary {
        let (growth, omitted) = HeapAnalysis.growth(generations, limit: options.limits.maximumGrowthTypes)
        return HeapGraphSummary(
            captures: captures, growth: growth, omittedGrowthTypes: omitted, generationLabels: generations.map(\.label),
            failures: failures)
    }
}
