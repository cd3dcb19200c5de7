import HarnessModel

/// Why evidence shows a leak: typed, so each renderer words it (report.md and the check table in Reports, a test
/// failure in MemHarnessTesting).
public enum LeakReason: Sendable, Hashable {
    /// Tracked objects of one type were still alive at the end (after teardown, after the closure); `tracked`: how many
    /// of that type were tracked, when known.
    case survived(TypeCount, tracked: Int?)
    /// The live heap grew per iteration of the `repeat` step of `phase` (per run of a closure) beyond the criteria.
    case grows(phase: String, warmupIterations: Int, fit: SlopeFit)
    /// The heap capture holds blocks no root reaches that were not unreachable before the work began.
    case unreachable(HeapEvidence)
}

/// Why there is no verdict.
public enum LeakUnassessed: Sendable, Hashable {
    /// Nothing was tracked, no `repeat` step ran and no heap graph was asked for.
    case noEvidence
    /// Nothing was tracked, no `repeat` step ran, and the heap graph asked for has no capture (`failure` says why,
    /// when it was recorded).
    case noHeapCapture(HeapCaptureFailure?)
}

/// The leak judgement: evidence and an expectation in, a verdict with typed reasons out.
///
/// The one rule, for a case, a strategy (its repetitions and its instrumented case) and an `expectMemory` closure
/// alike: a tracked object that survived is a leak; so is a growth series whose fit's 95% lower bound is above the
/// criteria's minimum (`LeakCriteria`); so is a block no root reaches that no root already failed to reach before the
/// work began. Evidence that shows a leak once is a leak (a leak that shows in one repetition is still a leak). The
/// residue is not evidence: it also holds what the modelled system keeps on purpose.
public struct LeakJudgement: Sendable, Hashable {
    public var verdict: LeakVerdict
    public var expectation: LeakExpectation?
    public var outcome: LeakOutcome
    /// Why the verdict is `leaks`: the reasons of the first leaking repetition, then those of any other evidence (an
    /// instrumented case, a closure); empty otherwise.
    public var reasons: [LeakReason]
    /// Why there is no verdict, when it is `notAssessed`.
    public var unassessed: LeakUnassessed?
    /// Measured repetitions that gave evidence, and of those the ones that showed a leak.
    public var assessedRepetitions: Int
    public var leakingRepetitions: Int

    /// True when the judgement is a finding that fails a run or a test: a leak that was not expected.
    public var isFinding: Bool { outcome == .unexpectedLeak }

    /// Judges `evidence` against `expectation` under `criteria`. Without an expectation a leak counts as unexpected: a
    /// leak is a defect unless the scenario says the strategy demonstrates one.
    /// Leak groups of the heap graph that `suppressions` match are known leaks: left out, and counted as suppressed.
    public init(
        _ evidence: [LeakEvidence], expectation: LeakExpectation?, criteria: LeakCriteria = .standard,
        suppressions: [LeakSuppression] = []
    ) {
        var reasons: [LeakReason] = []
        var assessed = 0
        var leaking = 0
        var anyAssessed = false
        var heapFailure: HeapCaptureFailure??
        for item in evidence {
            guard item.isAssessable else {
                if let heap = item.heap { heapFailure = .some(heap.failure) }
                continue
            }
            anyAssessed = true
            var judged = item
            judged.heap = item.heap?.suppressing(suppressions)
            let found = Self.reasons(judged, criteria: criteria)
            guard case .repetition = item.source else {
                reasons += found
                continue
            }
            assessed += 1
            guard !found.isEmpty else { continue }
            if leaking == 0 { reasons = found + reasons }
            leaking += 1
        }
        verdict = !anyAssessed ? .notAssessed : reasons.isEmpty ? .leakFree : .leaks
        unassessed = anyAssessed ? nil : heapFailure.map(LeakUnassessed.noHeapCapture) ?? .noEvidence
        self.reasons = reasons
        self.expectation = expectation
        outcome = Self.outcome(verdict: verdict, expectation: expectation)
        assessedRepetitions = assessed
        leakingRepetitions = leaking
    }

    /// What one piece of evidence shows: survivors first, then growth, then what no root reaches.
    static func reasons(_ evidence: LeakEvidence, criteria: LeakCriteria) -> [LeakReason] {
        var reasons: [LeakReason] = evidence.survivors.filter { $0.count > 0 }.map { survivor in
            .survived(survivor, tracked: evidence.tracked.first { $0.typeName == survivor.typeName }?.count)
        }
        for series in evidence.growth {
            guard let fit = series.fit(criteria: criteria), criteria.isGrowing(fit) else { continue }
            reasons.append(.grows(phase: series.phase, warmupIterations: series.warmupIterations, fit: fit))
        }
        if let heap = evidence.heap, heap.new.blocks > 0 { reasons.append(.unreachable(heap)) }
        return reasons
    }

    /// How a verdict relates to an expectation.
    public static func outcome(verdict: LeakVerdict, expectation: LeakExpectation?) -> LeakOutcome {
        switch (verdict, expectation) {
        case (.notAssessed, _): return .notAssessed
        case (.leaks, .leaks): return .asExpected
        case (.leaks, _): return .unexpectedLeak
        case (.leakFree, .leaks): return .expectedLeakNotSeen
        case (.leakFree, _): return .asExpected
        }
    }
}

extension LeakCriteria {
    /// True when `fit` shows growth: its 95% lower bound is above the criteria's minimum.
    public func isGrowing(_ fit: SlopeFit) -> Bool {
        fit.lowerBoundBytesPerIteration > minimumSlopeBytesPerIteration
    }
}

extension CaseResult {
    /// This case judged alone under the standard criteria (`LeakEvidence(case:)`); not assessed unless it completed.
    public var leakJudgement: LeakJudgement {
        LeakJudgement([LeakEvidence(case: self)], expectation: expectation, suppressions: suppressions ?? [])
    }
}
