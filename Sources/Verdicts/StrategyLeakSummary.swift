import HarnessModel

/// A per-type count over repetitions: the lowest and the highest.
public struct TypeCountRange: Sendable, Hashable, Codable {
    /// The name the workload tracked the objects under.
    public var typeName: String
    /// Fewest over the repetitions (0 where a repetition had none).
    public var minimum: Int
    /// Most over the repetitions.
    public var maximum: Int

    public init(typeName: String, minimum: Int, maximum: Int) {
        self.typeName = typeName
        self.minimum = minimum
        self.maximum = maximum
    }
}

/// The growth fit of one `repeat` step, reduced over repetitions.
public struct GrowthSummary: Sendable, Hashable, Codable {
    /// The `repeat` step's phase.
    public var phase: String
    /// Median fitted slope, bytes per iteration.
    public var medianSlopeBytesPerIteration: Double
    /// Median half-width of the slope's 95% confidence interval, bytes per iteration.
    public var medianBoundBytesPerIteration: Double
    /// One-off jumps left out of the fits, all repetitions together.
    public var oneOffJumps: Int

    public init(
        phase: String, medianSlopeBytesPerIteration: Double, medianBoundBytesPerIteration: Double, oneOffJumps: Int = 0
    ) {
        self.phase = phase
        self.medianSlopeBytesPerIteration = medianSlopeBytesPerIteration
        self.medianBoundBytesPerIteration = medianBoundBytesPerIteration
        self.oneOffJumps = oneOffJumps
    }
}

/// One strategy's leak judgement (`LeakJudgement` over its repetitions and its instrumented case) with the evidence
/// reduced for the report's Leaks section.
public struct StrategyLeakSummary: Sendable, Hashable {
    public var strategy: String
    /// The judgement of the strategy's evidence against what the scenario file expects of it.
    public var judgement: LeakJudgement
    /// Objects tracked per type over the repetitions, sorted by type name.
    public var tracked: [TypeCountRange]
    /// Tracked objects that survived per type over the repetitions; types that never survived are left out.
    public var survivors: [TypeCountRange]
    /// Median residue, bytes.
    public var medianResidueBytes: Double
    /// Largest residue uncertainty of the repetitions (thread caches), bytes.
    public var residueUncertaintyBytes: Int
    /// One entry per `repeat` step, in script order.
    public var growth: [GrowthSummary]
    /// The heap graph of the strategy's instrumented case when it has a capture (its last: after teardown, a program's
    /// at exit), with what no root reached before: blocks no root reaches are a leak, found without anything tracked.
    public var heap: HeapEvidence?

    /// Judges one strategy's cases (any order; only `ok` cases count) under `criteria`, with the heap graph of its
    /// instrumented case among `instrumented` when one captured the heap.
    public init(
        strategy: String, cases: [CaseResult], instrumented: [CaseResult] = [], criteria: LeakCriteria = .standard
    ) {
        let evidence = LeakEvidence.strategy(strategy, cases: cases, instrumented: instrumented)
        let ok = cases.filter { $0.strategy == strategy }.compactMap(\.completed)
        // Every case of a strategy states the same expectation (the file states it per strategy).
        let expectation = (cases + instrumented).first { $0.strategy == strategy && $0.expectation != nil }?.expectation
        let suppressions = (cases + instrumented).suppressions(of: strategy)
        self.strategy = strategy
        judgement = LeakJudgement(evidence, expectation: expectation, criteria: criteria, suppressions: suppressions)
        heap = evidence.compactMap(\.heap).first { $0.capture != nil }?.suppressing(suppressions)
        let measurements = ok.compactMap(\.leaks)
        func ranges(_ counts: (LeakMeasurements) -> [TypeCount]) -> [TypeCountRange] {
            let names = Set(measurements.flatMap { counts($0).map(\.typeName) }).sorted()
            return names.map { name in
                let values = measurements.map { counts($0).first { $0.typeName == name }?.count ?? 0 }
                return TypeCountRange(typeName: name, minimum: values.min() ?? 0, maximum: values.max() ?? 0)
            }
        }
        tracked = ranges(\.tracked)
        survivors = ranges(\.survivors).filter { $0.maximum > 0 }
        medianResidueBytes = Statistics.median(ok.compactMap { $0.residueBytes.map(Double.init) }) ?? 0
        residueUncertaintyBytes = measurements.map(\.residueUncertaintyBytes).max() ?? 0
        let phases = measurements.first?.growth.map(\.phase) ?? []
        growth = phases.compactMap { phase in
            let fits = measurements.compactMap { $0.growth.first { $0.phase == phase }?.fit(criteria: criteria) }
            guard let slope = Statistics.median(fits.map(\.slopeBytesPerIteration)),
                let bound = Statistics.median(fits.map(\.boundBytesPerIteration))
            else { return nil }
            return GrowthSummary(
                phase: phase, medianSlopeBytesPerIteration: slope, medianBoundBytesPerIteration: bound,
                oneOffJumps: fits.reduce(0) { $0 + $1.oneOffJumps })
        }
    }

    /// One summary per strategy of `run`, in the file's order.
    public static func summaries(_ run: ScenarioRun, criteria: LeakCriteria = .standard) -> [StrategyLeakSummary] {
        run.strategies.map {
            StrategyLeakSummary(strategy: $0, cases: run.cases, instrumented: run.instrumentedCases, criteria: criteria)
        }
    }

    /// What the scenario file expects of the strategy, if it says.
    public var expectation: LeakExpectation? { judgement.expectation }
    /// `leaks` when any evidence showed a leak, `leak-free` when none did, `not-assessed` without evidence.
    public var verdict: LeakVerdict { judgement.verdict }
    public var outcome: LeakOutcome { judgement.outcome }
    /// Repetitions that ended `ok` and gathered leak evidence, and of those the ones that leaked.
    public var assessedRepetitions: Int { judgement.assessedRepetitions }
    public var leakingRepetitions: Int { judgement.leakingRepetitions }
}
