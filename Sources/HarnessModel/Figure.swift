/// A figure of a case that a threshold can name.
public enum Figure: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Peak `stats.allocated` above the baseline (the ranking figure), bytes.
    case peakAllocated
    case peakActive, peakResident, peakMapped, peakRetained, peakMetadata
    /// `VmHWM`, bytes.
    case peakRSS
    /// Allocated after teardown and settle minus the baseline, bytes.
    case residue
    /// Wall time of the case, milliseconds.
    case duration
    /// Peak allocated above baseline during one phase, bytes.
    case phasePeakAllocated(String)
    /// A scenario metric by name, in its own unit.
    case metric(String)
    /// Tracked objects that survived teardown and settle (leak detection), a count.
    case leakedObjects
    /// Growth of the live heap per `repeat` iteration (fitted slope), bytes.
    case growthPerIteration
    /// Peak of the live bytes counted at every allocation (`--peak exact`) above its baseline, bytes.
    case exactPeak
    /// Blocks no root reaches in the heap graph's last capture (after teardown), a count. Heap-graph figures
    /// come from a strategy's instrumented case, the one case that captures the heap.
    case leakedBlocks
    /// Their bytes.
    case leakedBytes
    /// Leaked cycles (strongly connected components) in the heap graph's last capture, a count.
    case leakedCycles

    /// The figure `name` names in the one grammar of figure names (thresholds, `rank:`, baselines, history,
    /// `history bisect --figure`): a simple name (`peakAllocated`), `phases.<phase>.peakAllocated` or
    /// `metrics.<name>`; nil for anything else. The inverse of `description`. Whether the phase or the metric exists
    /// is the caller's to check.
    public init?(name: String) {
        if let figure = Self.simpleNames[name] {
            self = figure
            return
        }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 3, parts[0] == "phases", !parts[1].isEmpty, parts[2] == "peakAllocated" {
            self = .phasePeakAllocated(parts[1])
        } else if parts.count == 2, parts[0] == "metrics", !parts[1].isEmpty {
            self = .metric(parts[1])
        } else {
            return nil
        }
    }

    /// Every form of figure name, for messages: the simple names, then the two patterns.
    public static let nameForms = simpleNames.keys.sorted() + ["phases.<phase>.peakAllocated", "metrics.<name>"]

    /// The names a scenario file may use, besides `phases.<phase>.peakAllocated` and `metrics.<name>`.
    public static let simpleNames: [String: Figure] = [
        "peakAllocated": .peakAllocated, "peakActive": .peakActive, "peakResident": .peakResident,
        "peakMapped": .peakMapped, "peakRetained": .peakRetained, "peakMetadata": .peakMetadata,
        "peakRSS": .peakRSS, "residue": .residue, "duration": .duration,
        "leakedObjects": .leakedObjects, "growthPerIteration": .growthPerIteration, "exactPeak": .exactPeak,
        "leakedBlocks": .leakedBlocks, "leakedBytes": .leakedBytes, "leakedCycles": .leakedCycles,
    ]

    /// True for the heap graph's figures: only a strategy's instrumented case has them (a server's leaked blocks per
    /// request among them).
    public var isHeapGraph: Bool {
        switch self {
        case .leakedBlocks, .leakedBytes, .leakedCycles: return true
        case .metric(let name): return name == ServerPlan.leakedBlocksPerRequest
        default: return false
        }
    }

    /// True for the figures that count resident file pages (`peakRSS`, and the resident breakdown's measured set,
    /// mapped files and unexplained rest): they move with the page cache between runs of an unchanged program
    /// (`ResidentBreakdown.pageCacheMetricNames`), so history holds them to a wider noise floor.
    public var followsPageCache: Bool {
        switch self {
        case .peakRSS: return true
        case .metric(let name): return ResidentBreakdown.pageCacheMetricNames.contains(name)
        default: return false
        }
    }

    /// True when the figure is a byte count (its limits take size units).
    public var isBytes: Bool {
        switch self {
        case .duration, .metric, .leakedObjects, .leakedBlocks, .leakedCycles: return false
        default: return true
        }
    }

    public var description: String {
        switch self {
        case .peakAllocated: return "peakAllocated"
        case .peakActive: return "peakActive"
        case .peakResident: return "peakResident"
        case .peakMapped: return "peakMapped"
        case .peakRetained: return "peakRetained"
        case .peakMetadata: return "peakMetadata"
        case .peakRSS: return "peakRSS"
        case .residue: return "residue"
        case .duration: return "duration"
        case .phasePeakAllocated(let phase): return "phases.\(phase).peakAllocated"
        case .metric(let name): return "metrics.\(name)"
        case .leakedObjects: return "leakedObjects"
        case .growthPerIteration: return "growthPerIteration"
        case .exactPeak: return "exactPeak"
        case .leakedBlocks: return "leakedBlocks"
        case .leakedBytes: return "leakedBytes"
        case .leakedCycles: return "leakedCycles"
        }
    }

    /// The figure's value in one case's measurements (bytes, milliseconds or the metric's unit); nil when they lack it.
    public func value(in measurements: CaseMeasurements) -> Double? {
        let m = measurements
        switch self {
        case .peakAllocated: return Double(m.peakAllocatedNetBytes)
        case .peakActive: return Double(m.peak.activeBytes)
        case .peakResident: return Double(m.peak.residentBytes)
        case .peakMapped: return Double(m.peak.mappedBytes)
        case .peakRetained: return Double(m.peak.retainedBytes)
        case .peakMetadata: return Double(m.peak.metadataBytes)
        case .peakRSS: return Double(m.peakRSSBytes)
        case .residue: return m.residueBytes.map(Double.init)
        case .duration: return Double(m.durationNanoseconds) / 1e6
        case .phasePeakAllocated(let phase):
            return m.phases.first { $0.name == phase }.map { Double($0.peakAllocatedBytes - m.baselineAllocatedBytes) }
        case .metric(let name):
            return m.metric(name)?.value
        case .leakedObjects:
            return m.leaks.map { Double($0.survivorCount) }
        case .growthPerIteration:
            return m.leaks?.growth.compactMap(\.fit).map(\.slopeBytesPerIteration).max()
        case .exactPeak:
            return m.exactPeakNetBytes.map(Double.init)
        case .leakedBlocks: return m.heapGraph?.leakedBlocks.map(Double.init)
        case .leakedBytes: return m.heapGraph?.leakedBytes.map(Double.init)
        case .leakedCycles: return m.heapGraph?.cycleCount.map(Double.init)
        }
    }

    /// The figure's value in a completed case; nil when the case did not complete or lacks it.
    public func value(in result: CaseResult) -> Double? {
        result.completed.flatMap(value(in:))
    }

    /// True for the high-water marks (peak allocated, exact, resident, RSS...): a reading says "peaks".
    public var isPeak: Bool {
        switch self {
        case .peakAllocated, .peakActive, .peakResident, .peakMapped, .peakRetained, .peakMetadata, .peakRSS,
            .exactPeak,
            .phasePeakAllocated:
            return true
        case .residue, .duration, .metric, .leakedObjects, .growthPerIteration, .leakedBlocks, .leakedBytes,
            .leakedCycles:
            return false
        }
    }

    /// Formats a value of this figure for messages; a metric in its own unit when `unit` is known.
    public func format(_ value: Double, unit: Metric.Unit? = nil) -> String {
        switch self {
        case .duration: return "\(Units.fixed(value, decimals: 1)) ms"
        case .leakedObjects, .leakedBlocks, .leakedCycles:
            return Units.fixed(value, decimals: value == value.rounded() ? 0 : 1)
        case .metric:
            switch unit {
            case .bytes?: return Units.formatBytes(value)
            case .milliseconds?: return "\(Units.fixed(value, decimals: 2)) ms"
            case .perSecond?: return "\(Units.fixed(value, decimals: 1))/s"
            default: return value == value.rounded() ? Units.fixed(value, decimals: 0) : Units.fixed(value, decimals: 3)
            }
        default: return Units.formatBytes(value)
        }
    }
}

/// A strategy's figure: `signal-next.peakAllocated`.
public struct FigureReference: Sendable, Hashable, Codable, CustomStringConvertible {
    public var strategy: String
    public var figure: Figure
    public init(strategy: String, figure: Figure) {
        self.strategy = strategy
        self.figure = figure
    }
    public var description: String { "\(strategy).\(figure)" }
}
