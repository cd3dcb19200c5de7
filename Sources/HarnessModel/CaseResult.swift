/// One case of a run (a scenario × a strategy × a repetition) and what happened to it.
public struct CaseResult: Sendable, Hashable, Codable {
    /// The scenario's name (with the sweep point for a sweep: `live-query @ burst.duration=2s`).
    public var scenario: String
    public var workload: String
    public var strategy: String
    /// Repetition number, from 1.
    public var repetition: Int
    /// The leak expectation the scenario file states for this strategy, if any.
    public var expectation: LeakExpectation?
    /// What happened, with what was measured.
    public var outcome: CaseOutcome

    public init(
        scenario: String, workload: String, strategy: String, repetition: Int,
        expectation: LeakExpectation? = nil, outcome: CaseOutcome
    ) {
        self.scenario = scenario
        self.workload = workload
        self.strategy = strategy
        self.repetition = repetition
        self.expectation = expectation
        self.outcome = outcome
    }

    /// The outcome's kind, as `summary.csv` and the report spell it.
    public var status: CaseStatus { outcome.status }

    /// Why the case did not complete, in plain words; nil when it completed.
    public var failure: String? { outcome.failure }

    /// Whatever was measured, whether or not the case completed (a killed case has its samples up to the kill).
    public var measurements: CaseMeasurements? { outcome.measurements }

    /// The measurements of a completed case: the only ones medians, rankings and gates use.
    public var completed: CaseMeasurements? {
        if case .completed(let measurements) = outcome { return measurements }
        return nil
    }

    /// A metric of the measurements, by name.
    public func metric(_ name: String) -> Metric? { measurements?.metric(name) }

    /// True for the extra case of a strategy that recorded allocation stacks or captured its heap (an instrumented
    /// case): its figures never gate.
    public var attributed = false

    /// The known leaks its scenario or `--suppressions` leaves out of leak verdicts; nil when none were given (and in
    /// records written before they were kept).
    public var suppressions: [LeakSuppression]? = nil

    /// Wall time the case took, its process's start and end included, nanoseconds; nil in records
    /// written before it was kept.
    public var wallNanoseconds: Int64? = nil

    /// `live-query / signal-next #2`, for progress lines and messages (`#stacks` for the attributed case, `#heap`
    /// for one that captured the heap only).
    public var label: String { "\(scenario) / \(strategy) #\(attributed ? instrumentation : String(repetition))" }

    /// What an instrumented case recorded: `stacks` (allocation stacks, and the heap graph too when asked) or
    /// `heap` (the heap graph only).
    public var instrumentation: String {
        measurements?.profile == nil && measurements?.heapGraph != nil ? "heap" : "stacks"
    }
}
