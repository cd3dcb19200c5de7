import FileIO
import HarnessModel

/// Where and from what a run was made: its commit, branch, the commit's author time and the machine.
public struct Provenance: Sendable, Hashable, Codable {
    /// The commit's full SHA (or whatever `--commit` gave); empty when unknown.
    public var commit: String
    /// The branch; empty when unknown (a detached HEAD outside CI).
    public var branch: String
    /// The commit's author time, ISO 8601 (`git log -1 --format=%aI`); the run's own time when unknown.
    public var time: String
    /// The machine the run was made on (a CI runner's name, or the CPU model and count).
    public var machine: String

    public init(commit: String, branch: String, time: String, machine: String) {
        self.commit = commit
        self.branch = branch
        self.time = time
        self.machine = machine
    }

    /// The commit as people write it: its first 10 characters.
    public var shortCommit: String { commit.isEmpty ? "(no commit)" : String(commit.prefix(10)) }
}

/// One series of a history: a figure of a strategy in a scenario (`live-query / signal-next / peakAllocated`).
public struct SeriesKey: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var scenario: String
    public var strategy: String
    /// The figure's name as a threshold names it (`peakAllocated`, `metrics.hitRate`).
    public var figure: String

    public init(scenario: String, strategy: String, figure: String) {
        self.scenario = scenario
        self.strategy = strategy
        self.figure = figure
    }

    public static func < (left: SeriesKey, right: SeriesKey) -> Bool {
        (left.scenario, left.strategy, left.figure) < (right.scenario, right.strategy, right.figure)
    }

    public var description: String { "\(scenario) / \(strategy) / \(figure)" }

    /// True when the figure counts resident file pages (`Figure.followsPageCache`).
    public var followsPageCache: Bool { Figure(name: figure)?.followsPageCache ?? false }
}

/// A figure's median in one run.
public struct RecordedFigure: Sendable, Hashable, Codable {
    public var key: SeriesKey
    /// The median over the run's completed repetitions, in the figure's unit (bytes unless `isBytes` is false).
    public var value: Double
    /// Completed repetitions the median is of.
    public var repetitions: Int
    /// True when the scenario gates on this figure (its ranking figure, a threshold's subject, a baseline figure).
    public var gated: Bool
    public var isBytes: Bool

    public init(key: SeriesKey, value: Double, repetitions: Int, gated: Bool, isBytes: Bool) {
        self.key = key
        self.value = value
        self.repetitions = repetitions
        self.gated = gated
        self.isBytes = isBytes
    }
}

/// The live set at the peak of a strategy's attributed case, as folded stacks (`root;...;leaf` → bytes).
public struct RecordedSites: Sendable, Hashable, Codable {
    public var scenario: String
    public var strategy: String
    /// Stack path → sampled live bytes at the peak above the baseline, sorted by path.
    public var stacks: [String: Int]

    public init(scenario: String, strategy: String, stacks: [String: Int]) {
        self.scenario = scenario
        self.strategy = strategy
        self.stacks = stacks
    }
}

/// The live types of a strategy's last heap capture (`--heap-graph`).
public struct RecordedTypes: Sendable, Hashable, Codable {
    public var scenario: String
    public var strategy: String
    /// Type name → live bytes.
    public var bytes: [String: Int]
    /// Type name → live blocks.
    public var counts: [String: Int]
    /// The leak signatures of the capture (its largest groups); nil in a record written before they were kept.
    public var leaks: [LeakSignatureTally]?
    /// Leak groups the capture left out by its bound; nil in a record written before they were kept.
    public var omittedLeakGroups: Int?

    public init(
        scenario: String, strategy: String, bytes: [String: Int], counts: [String: Int],
        leaks: [LeakSignatureTally]? = nil, omittedLeakGroups: Int? = nil
    ) {
        self.scenario = scenario
        self.strategy = strategy
        self.bytes = bytes
        self.counts = counts
        self.leaks = leaks
        self.omittedLeakGroups = omittedLeakGroups
    }
}

/// One run in a history store: its provenance and its figures, small and immutable, named by its content.
public struct HistoryRecord: Sendable, Hashable, Codable {
    /// The format of a record: readers refuse any other.
    public static let currentSchema = "memharness-history-record/1"

    public var schema: String
    public var provenance: Provenance
    /// When the run finished (run.json's `generatedAt`), ISO 8601 UTC.
    public var runAt: String
    /// Every figure of every strategy, sorted by series.
    public var figures: [RecordedFigure]
    /// Allocation sites of the strategies run with `--attribute`, sorted.
    public var sites: [RecordedSites]
    /// Live types of the strategies run with `--heap-graph`, sorted.
    public var types: [RecordedTypes]

    public init(
        provenance: Provenance, runAt: String, figures: [RecordedFigure], sites: [RecordedSites] = [],
        types: [RecordedTypes] = []
    ) {
        schema = Self.currentSchema
        self.provenance = provenance
        self.runAt = runAt
        self.figures = figures.sorted { $0.key < $1.key }
        self.sites = sites.sorted { ($0.scenario, $0.strategy) < ($1.scenario, $1.strategy) }
        self.types = types.sorted { ($0.scenario, $0.strategy) < ($1.scenario, $1.strategy) }
    }

    /// The figures a history keeps of a scenario besides its metrics and phases: every memory figure a gate
    /// or a reader looks at (not duration: wall time is not memory, and a loaded CI machine moves it).
    static let memoryFigures: [Figure] = [
        .peakAllocated, .exactPeak, .peakResident, .peakRSS, .residue, .growthPerIteration, .leakedObjects,
    ]

    /// The record of `report` made at `provenance`: the median of each figure per scenario and strategy, the
    /// folded stacks of attributed cases and the types of heap graphs.
    public init(report: RunReport, provenance: Provenance) {
        var figures: [RecordedFigure] = []
        var sites: [RecordedSites] = []
        var types: [RecordedTypes] = []
        for run in report.scenarios {
            figures += Self.figures(of: run)
            for result in run.instrumentedCases {
                if let profile = result.measurements?.profile {
                    sites.append(
                        RecordedSites(scenario: run.name, strategy: result.strategy, stacks: Self.folded(profile)))
                }
                if let capture = result.measurements?.heapGraph?.last {
                    let names = capture.types.map { ($0.type.name.isEmpty ? "(unnamed)" : $0.type.name, $0) }
                    types.append(
                        RecordedTypes(
                            scenario: run.name, strategy: result.strategy,
                            bytes: Dictionary(names.map { ($0.0, $0.1.bytes) }, uniquingKeysWith: +),
                            counts: Dictionary(names.map { ($0.0, $0.1.count) }, uniquingKeysWith: +),
                            leaks: capture.leakSignatures, omittedLeakGroups: capture.omittedGroups))
                }
            }
        }
        self.init(provenance: provenance, runAt: report.generatedAt, figures: figures, sites: sites, types: types)
    }

    /// The medians of `run`'s figures, one per strategy and figure that has a completed value.
    static func figures(of run: ScenarioRun) -> [RecordedFigure] {
        let gatedFigures = Set([run.ranking] + Baseline.figures(of: run) + run.thresholds.map(\.subject.figure))
        let metrics = run.cases.lazy.compactMap(\.completed).first?.metrics.map { Figure.metric($0.name) } ?? []
        let phases = run.steps.map { Figure.phasePeakAllocated($0) }
        var candidates: [Figure] = []
        for figure in [run.ranking] + memoryFigures + run.thresholds.map(\.subject.figure) + metrics + phases
        where !candidates.contains(figure) {
            candidates.append(figure)
        }
        var result: [RecordedFigure] = []
        for strategy in run.strategies {
            for figure in candidates {
                let values = ThresholdEvaluator.values(FigureReference(strategy: strategy, figure: figure), in: run)
                guard let median = Statistics.median(values) else { continue }
                let key = SeriesKey(scenario: run.name, strategy: strategy, figure: figure.description)
                result.append(
                    RecordedFigure(
                        key: key, value: median, repetitions: values.count, gated: gatedFigures.contains(figure),
                        isBytes: run.isBytes(figure)))
            }
        }
        return result
    }

    /// The folded stacks of a profile (`AllocationProfile.foldedStacks`).
    static func folded(_ profile: AllocationProfile) -> [String: Int] { profile.foldedStacks }
}
