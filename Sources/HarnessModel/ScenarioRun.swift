/// One scenario of a run with all its cases.
public struct ScenarioRun: Sendable, Hashable, Codable {
    /// The scenario's name (from the file).
    public var name: String
    /// The scenario file, as given on the command line.
    public var file: String
    public var workload: String
    /// The scenario's description from its file.
    public var summary: String
    /// Parameters after defaults and overrides, in declaration order.
    public var parameters: [NamedValue]
    /// Strategies in the order the file lists them.
    public var strategies: [String]
    /// The phases (step names) in order.
    public var steps: [String]
    public var repetitions: Int
    /// Every case, in run order.
    public var cases: [CaseResult]
    /// The scenario file's thresholds, evaluated on the medians of `cases`.
    public var thresholds: [Threshold] = []
    /// The figure that ranks the strategies (`rank:`; peak allocated unless the file says otherwise).
    public var ranking: Figure = .peakAllocated
    /// The phase whose growth per second the report gives beside the peak (`rate:`); nil when not asked.
    public var ratePhase: String? = nil
    /// One case per strategy that recorded allocation stacks (`--attribute`), kept apart from `cases`:
    /// its figures are inflated by the recording and never enter medians, rankings or gates.
    public var attributedCases: [CaseResult] = []
    /// `repetitions: auto`: the stopping rule the cases ran under (each strategy's count is in `cases`);
    /// nil for a fixed count.
    public var adaptiveRepetitions: AdaptiveRepetitions?

    public init(
        name: String, file: String, workload: String, summary: String, parameters: [NamedValue],
        strategies: [String], steps: [String], repetitions: Int, cases: [CaseResult]
    ) {
        self.name = name
        self.file = file
        self.workload = workload
        self.summary = summary
        self.parameters = parameters
        self.strategies = strategies
        self.steps = steps
        self.repetitions = repetitions
        self.cases = cases
    }
}
