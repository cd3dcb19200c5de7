/// One case of a run (a scenario × a strategy × a repetition) and what happened to it.
public struct CaseResult: Sendable, Hashable, Codable {
    /// The scenario's name (with the sweep point for a sweep: `live-query @ burst.duration=2s`).
    public var scenario: String
    public var workload: String
    public var strategy: String
    /// Repetition number, from 1; 0 for an instrumented case (it is no repetition: `instrumentation` names it).
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

    /// Why the case did not complete, typed; nil when it completed.
    public var failure: CaseFailure? { outcome.failure }

    /// Whatever was measured, whether or not the case completed (a killed case has its samples up to the kill).
    public var measurements: CaseMeasurements? { outcome.measurements }

    /// The measurements of a completed case: the only ones medians, rankings and gates use.
    public var completed: CaseMeasurements? {
        if case .completed(let measurements) = outcome { return measurements }
        return nil
    }

    /// A metric of the measurements, by name.
    public func metric(_ name: String) -> Metric? { measurements?.metric(name) }

    /// What the extra case of a strategy recorded (allocation stacks, or its heap only): an instrumented case, whose
    /// figures never gate; nil for a measured case (a repetition).
    public var instrumentation: Instrumentation? = nil

    /// True for an instrumented case.
    public var isInstrumented: Bool { instrumentation != nil }

    /// The known leaks its scenario or `--suppressions` leaves out of leak verdicts; nil when none were given (and in
    /// records written before they were kept).
    public var suppressions: [LeakSuppression]? = nil

    /// Wall time the case took, its process's start and end included, nanoseconds; nil in records
    /// written before it was kept.
    public var wallNanoseconds: Int64? = nil

    /// `live-query / signal-next #2`, for progress lines and messages (`#stacks` for the case that recorded
    /// allocation stacks, `#heap` for one that captured the heap only).
    public var label: String { "\(scenario) / \(strategy) #\(instrumentation?.rawValue ?? String(repetition))" }
}

// run.json: an instrumented case has `instrumentation` and no `repetition`. Records written before kept it as
// `attributed: true` with the next repetition number; they read as instrumented cases, named by what they hold.
extension CaseResult {
    private enum CodingKeys: String, CodingKey {
        case scenario, workload, strategy, repetition, instrumentation, expectation, outcome, wallNanoseconds
        case attributed
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            scenario: try container.decode(String.self, forKey: .scenario),
            workload: try container.decode(String.self, forKey: .workload),
            strategy: try container.decode(String.self, forKey: .strategy),
            repetition: try container.decodeIfPresent(Int.self, forKey: .repetition) ?? 0,
            expectation: try container.decodeIfPresent(LeakExpectation.self, forKey: .expectation),
            outcome: try container.decode(CaseOutcome.self, forKey: .outcome))
        wallNanoseconds = try container.decodeIfPresent(Int64.self, forKey: .wallNanoseconds)
        instrumentation = try container.decodeIfPresent(Instrumentation.self, forKey: .instrumentation)
        if instrumentation == nil, try container.decodeIfPresent(Bool.self, forKey: .attributed) == true {
            repetition = 0
            instrumentation = measurements?.profile == nil && measurements?.heapGraph != nil ? .heap : .stacks
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(scenario, forKey: .scenario)
        try container.encode(workload, forKey: .workload)
        try container.encode(strategy, forKey: .strategy)
        if let instrumentation {
            try container.encode(instrumentation, forKey: .instrumentation)
        } else {
            try container.encode(repetition, forKey: .repetition)
        }
        try container.encodeIfPresent(expectation, forKey: .expectation)
        try container.encode(outcome, forKey: .outcome)
        try container.encodeIfPresent(wallNanoseconds, forKey: .wallNanoseconds)
    }
}
