import HarnessModel

/// What a figure draws (a chart, a diagram, a view of the page). Each kind holds every number its drawings need, computed by the builder once (peaks and
/// their markers, trees, medians, scales); the SVG renderer and report.js lay them out and compute nothing else.
///
/// The generic kinds (`bars`, `panels`, `flame`, `path`) take any data of their shape: a new section uses them
/// without a renderer change. The others draw one kind of evidence.
public enum Chart: Sendable, Hashable {
    /// Memory over time: a line per strategy with its peak marker, phase bands, kills and memory warnings.
    case timeline(TimelineFigure)
    /// Horizontal bars with whiskers, one row per item, best first (generic).
    case bars(BarFigure)
    /// Small multiples: one panel of lines over a shared time axis per quantity (generic).
    case panels(PanelsFigure)
    /// One column of a flame tree as a flame graph (generic).
    case flame(FlameFigure)
    /// Two columns of a flame tree as a differential flame graph (generic).
    case differentialFlame(DifferentialFlameFigure)
    /// A leaked cycle as a ring of boxes and labelled arrows.
    case cycle(CycleFigure)
    /// A chain of references from a root, as boxes one under the other (generic).
    case path(PathFigure)
    /// The page's views after a scenario's section that Markdown cannot have: a difference of two columns chosen by
    /// the reader, the live set at each iteration mark, the heap graph's captures. Page only (no SVG file).
    case explore(ExploreFigure)
    /// A figure over commits: the values, each segment's median and noise band, the change points.
    case historySeries(HistorySeriesFigure)
}

// MARK: - Timeline

/// Allocated bytes above each strategy's baseline over time, one line per strategy (its representative case).
public struct TimelineFigure: Sendable, Hashable {
    public var scenario: String
    public var series: [Series]
    /// The phases of the longest representative case (the script is the same for all) and whose they are.
    public var phases: [Phase]
    public var phasesOf: String?
    public var scale: ValueScale

    public struct Series: Sendable, Hashable {
        public var strategy: String
        /// `Palette` colour, by the strategy's place in the scenario file.
        public var colour: String
        public var timeNanoseconds: [Int64]
        /// Allocated bytes minus the case's baseline at each sample.
        public var netBytes: [Int]
        public var phaseNames: [String]
        public var phaseIndex: [Int]
        /// Where the line peaks, as the ranking table counts it.
        public var peak: PeakMarker
        /// Where the memory limit stopped the case; nil when it finished.
        public var kill: Kill?
        /// When a memory warning was posted (the `memoryWarnings` gauge went up).
        public var warningNanoseconds: [Int64]

        public init(
            strategy: String, colour: String, timeNanoseconds: [Int64], netBytes: [Int], phaseNames: [String],
            phaseIndex: [Int], peak: PeakMarker, kill: Kill?, warningNanoseconds: [Int64]
        ) {
            self.strategy = strategy
            self.colour = colour
            self.timeNanoseconds = timeNanoseconds
            self.netBytes = netBytes
            self.phaseNames = phaseNames
            self.phaseIndex = phaseIndex
            self.peak = peak
            self.kill = kill
            self.warningNanoseconds = warningNanoseconds
        }
    }

    /// The one peak marker of a line: the case's measured peak (the figure its ranking row gives for that
    /// repetition), drawn at the sample where the line is highest.
    public struct PeakMarker: Sendable, Hashable {
        /// The sample the marker stands on.
        public var sampleIndex: Int
        public var timeNanoseconds: Int64
        public var netBytes: Int

        public init(sampleIndex: Int, timeNanoseconds: Int64, netBytes: Int) {
            self.sampleIndex = sampleIndex
            self.timeNanoseconds = timeNanoseconds
            self.netBytes = netBytes
        }
    }

    public struct Kill: Sendable, Hashable {
        public var timeNanoseconds: Int64
        public var netBytes: Int
        /// The limit above the case's baseline; nil when the footprint is not the allocated figure the line draws.
        public var limitNetBytes: Int?
        public var footprint: String

        public init(timeNanoseconds: Int64, netBytes: Int, limitNetBytes: Int?, footprint: String) {
            self.timeNanoseconds = timeNanoseconds
            self.netBytes = netBytes
            self.limitNetBytes = limitNetBytes
            self.footprint = footprint
        }
    }

    public struct Phase: Sendable, Hashable {
        public var name: String
        public var startNanoseconds: Int64
        public var endNanoseconds: Int64

        public init(name: String, startNanoseconds: Int64, endNanoseconds: Int64) {
            self.name = name
            self.startNanoseconds = startNanoseconds
            self.endNanoseconds = endNanoseconds
        }
    }

    public init(scenario: String, series: [Series], phases: [Phase], phasesOf: String?, scale: ValueScale) {
        self.scenario = scenario
        self.series = series
        self.phases = phases
        self.phasesOf = phasesOf
        self.scale = scale
    }
}

// MARK: - Generic charts

/// Horizontal bars, one row per item in order: a median bar, whiskers from its minimum to its maximum, and a label;
/// rows without a value say why.
public struct BarFigure: Sendable, Hashable {
    public var title: String
    public var subtitle: String
    public var axisTitle: String
    /// The chart in words, for readers who do not see it.
    public var description: String
    public var isBytes: Bool
    public var scale: ValueScale
    public var rows: [Row]

    public struct Row: Sendable, Hashable {
        public var name: String
        public var colour: String
        /// The bar; nil for a row with no value (`note` says why).
        public var value: Double?
        public var minimum: Double?
        public var maximum: Double?
        /// Beside the bar: its value and ratio to the best, in words.
        public var label: String
        /// In place of a bar.
        public var note: String?

        public init(
            name: String, colour: String, value: Double?, minimum: Double?, maximum: Double?, label: String,
            note: String? = nil
        ) {
            self.name = name
            self.colour = colour
            self.value = value
            self.minimum = minimum
            self.maximum = maximum
            self.label = label
            self.note = note
        }
    }

    public init(
        title: String, subtitle: String, axisTitle: String, description: String, isBytes: Bool, scale: ValueScale,
        rows: [Row]
    ) {
        self.title = title
        self.subtitle = subtitle
        self.axisTitle = axisTitle
        self.description = description
        self.isBytes = isBytes
        self.scale = scale
        self.rows = rows
    }
}

/// Small multiples over one time axis: a panel per quantity, a line per item in it.
public struct PanelsFigure: Sendable, Hashable {
    public var title: String
    public var legendEntries: [LegendEntry]
    public var panels: [Panel]
    /// The end of the time axis, seconds.
    public var maximumSeconds: Double

    public struct LegendEntry: Sendable, Hashable {
        public var name: String
        public var colour: String
    }

    public struct Panel: Sendable, Hashable {
        public var name: String
        public var isBytes: Bool
        public var lines: [Line]
        /// The largest value of the panel's lines (at least 1).
        public var maximum: Double
    }

    public struct Line: Sendable, Hashable {
        public var name: String
        public var colour: String
        public var seconds: [Double]
        public var values: [Double]
    }

    public init(title: String, legendEntries: [LegendEntry], panels: [Panel], maximumSeconds: Double) {
        self.title = title
        self.legendEntries = legendEntries
        self.panels = panels
        self.maximumSeconds = maximumSeconds
    }
}

// MARK: - Trees and graphs

/// One column of a flame tree as a flame graph.
public struct FlameFigure: Sendable, Hashable {
    public var title: String
    /// The graph in words (its largest allocation sites), for readers who do not see it.
    public var description: String
    public var tree: FlameTree
    public var column: Int

    public init(title: String, description: String, tree: FlameTree, column: Int) {
        self.title = title
        self.description = description
        self.tree = tree
        self.column = column
    }
}

/// Two columns of a flame tree, before and after, as a differential flame graph.
public struct DifferentialFlameFigure: Sendable, Hashable {
    public var title: String
    public var tree: FlameTree
    public var before: Int
    public var after: Int

    public init(title: String, tree: FlameTree, before: Int, after: Int) {
        self.title = title
        self.tree = tree
        self.before = before
        self.after = after
    }
}

/// A leaked cycle: each hop's holder type and field, ending where it started.
public struct CycleFigure: Sendable, Hashable {
    public var title: String
    public var memberBlocks: Int
    public var memberBytes: Int
    public var hops: [Hop]
    public var omittedHops: Int

    public struct Hop: Sendable, Hashable {
        /// The holder's type as a reader names it (`App.Store`, `closure context`).
        public var from: String
        /// Its kind's colour index (`HeapBlockKind`'s raw value).
        public var kind: Int
        /// The field, or `+24` (its byte offset), with ` (unowned)` for an unowned reference.
        public var field: String
        /// The field, or `+24`, alone.
        public var reference: String
        public var to: String
    }

    public init(title: String, memberBlocks: Int, memberBytes: Int, hops: [Hop], omittedHops: Int) {
        self.title = title
        self.memberBlocks = memberBlocks
        self.memberBytes = memberBytes
        self.hops = hops
        self.omittedHops = omittedHops
    }
}

/// A chain of references from a root to a block: each step's type and the field holding the next.
public struct PathFigure: Sendable, Hashable {
    public var title: String
    /// The root in words; nil when no root reaches the block.
    public var root: String?
    public var steps: [Step]
    public var omittedSteps: Int

    public struct Step: Sendable, Hashable {
        public var type: String
        /// The field holding the next step; nil on the last.
        public var field: String?
    }

    public init(title: String, root: String?, steps: [Step], omittedSteps: Int) {
        self.title = title
        self.root = root
        self.steps = steps
        self.omittedSteps = omittedSteps
    }
}

// MARK: - History

/// A figure over commits: one value per run, segments between change points with their median and noise band.
public struct HistorySeriesFigure: Sendable, Hashable {
    public var title: String
    public var subtitle: String
    public var isBytes: Bool
    public var values: [Double]
    /// ± around each segment's median.
    public var band: Double
    public var segments: [Segment]
    public var changes: [Change]
    /// The first and last run's commits, under the axis.
    public var firstLabel: String
    public var lastLabel: String

    public struct Segment: Sendable, Hashable {
        /// Runs `start..<end`.
        public var start: Int
        public var end: Int
        public var median: Double
    }

    public struct Change: Sendable, Hashable {
        /// The first run after the step.
        public var index: Int
        /// `1a2b3c4 +12.5%`.
        public var label: String
        /// A step of the newest run alone: a change point once the runs after it stay there (drawn apart).
        public var isNewestRunOnly: Bool = false
    }

    public init(
        title: String, subtitle: String, isBytes: Bool, values: [Double], band: Double, segments: [Segment],
        changes: [Change], firstLabel: String, lastLabel: String
    ) {
        self.title = title
        self.subtitle = subtitle
        self.isBytes = isBytes
        self.values = values
        self.band = band
        self.segments = segments
        self.changes = changes
        self.firstLabel = firstLabel
        self.lastLabel = lastLabel
    }
}

// MARK: - The page's explore views

/// What the page explores after a scenario's section: differences of two live sets (any two peak columns of the
/// tree, this run's or an earlier run's), the live set at each iteration mark, and each heap graph's captures.
public struct ExploreFigure: Sendable, Hashable {
    public var scenario: String
    /// The scenario's live sets; nil when no case recorded stacks.
    public var tree: FlameTree?
    public var heapGraphs: [HeapGraphView]

    /// One strategy's heap graph: its captures in order.
    public struct HeapGraphView: Sendable, Hashable {
        public var strategy: String
        public var captures: [Capture]
    }

    public struct Capture: Sendable, Hashable {
        public var label: String
        public var liveBlocks: Int
        public var liveBytes: Int
        public var leakedBlocks: Int
        public var leakedBytes: Int
        /// Each cycle with the leak group it belongs to.
        public var cycles: [GroupedCycle]
        public var paths: [RetainingPath]
    }

    public struct GroupedCycle: Sendable, Hashable {
        /// The leak group, from 1.
        public var group: Int
        public var cycle: CycleFigure
    }

    /// A retaining path and what was asked.
    public struct RetainingPath: Sendable, Hashable {
        /// The type asked for, or its address.
        public var query: String
        /// Why it was asked, in words.
        public var reason: String
        public var reachableInstances: Int
        public var leakedInstances: Int
        public var path: PathFigure
    }

    public init(scenario: String, tree: FlameTree?, heapGraphs: [HeapGraphView]) {
        self.scenario = scenario
        self.tree = tree
        self.heapGraphs = heapGraphs
    }
}
