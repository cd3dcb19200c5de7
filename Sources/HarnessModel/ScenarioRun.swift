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
    /// The instrumented cases: per strategy, the one that recorded allocation stacks (`--attribute`) and the one that
    /// captured its heap (`--heap-graph`, `expect:`), kept apart from `cases`: their figures are inflated by the
    /// recording and never enter medians, rankings or gates.
    public var instrumentedCases: [CaseResult] = []
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

// run.json: records written before the instrumented cases were named as such kept them as `attributedCases`.
extension ScenarioRun {
    private enum CodingKeys: String, CodingKey {
        case name, file, workload, summary, parameters, strategies, steps, repetitions, cases, thresholds, ranking
        case ratePhase, instrumentedCases, adaptiveRepetitions
        case attributedCases
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            file: try container.decode(String.self, forKey: .file),
            workload: try container.decode(String.self, forKey: .workload),
            summary: try container.decode(String.self, forKey: .summary),
            parameters: try container.decode([NamedValue].self, forKey: .parameters),
            strategies: try container.decode([String].self, forKey: .strategies),
            steps: try container.decode([String].self, forKey: .steps),
            repetitions: try container.decode(Int.self, forKey: .repetitions),
            cases: try container.decode([CaseResult].self, forKey: .cases))
        thresholds = try container.decode([Threshold].self, forKey: .thresholds)
        ranking = try container.decode(Figure.self, forKey: .ranking)
        ratePhase = try container.decodeIfPresent(String.self, forKey: .ratePhase)
        instrumentedCases =
            try container.decodeIfPresent([CaseResult].self, forKey: .instrumentedCases)
            ?? container.decode([CaseResult].self, forKey: .attributedCases)
        adaptiveRepetitions = try container.decodeIfPresent(AdaptiveRepetitions.self, forKey: .adaptiveRepetitions)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(file, forKey: .file)
        try container.encode(workload, forKey: .workload)
        try container.encode(summary, forKey: .summary)
        try container.encode(parameters, forKey: .parameters)
        try container.encode(strategies, forKey: .strategies)
        try container.encode(steps, forKey: .steps)
        try container.encode(repetitions, forKey: .repetitions)
        try container.encode(cases, forKey: .cases)
        try container.encode(thresholds, forKey: .thresholds)
        try container.encode(ranking, forKey: .ranking)
        try container.encodeIfPresent(ratePhase, forKey: .ratePhase)
        try container.encode(instrumentedCases, forKey: .instrumentedCases)
        try container.encodeIfPresent(adaptiveRepetitions, forKey: .adaptiveRepetitions)
    }
}

extension ScenarioRun {
    /// A figure's unit as the run's cases report it: a metric's own unit (the first case that has the metric); nil for
    /// the harness's own figures, whose unit the figure itself gives.
    public func unit(of figure: Figure) -> Metric.Unit? {
        guard case .metric(let name) = figure else { return nil }
        return cases.lazy.compactMap { $0.metric(name)?.unit }.first
    }

    /// True when `figure` counts bytes here: a byte figure, or a metric whose cases report it in bytes (a server's
    /// resident breakdown, its growth per 1,000 requests). History judges such a series with its byte quantum.
    public func isBytes(_ figure: Figure) -> Bool {
        if case .metric = figure { return unit(of: figure) == .bytes }
        return figure.isBytes
    }
}
