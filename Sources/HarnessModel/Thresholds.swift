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

    /// The names a scenario file may use, besides `phases.<phase>.peakAllocated` and `metrics.<name>`.
    public static let simpleNames: [String: Figure] = [
        "peakAllocated": .peakAllocated, "peakActive": .peakActive, "peakResident": .peakResident,
        "peakMapped": .peakMapped, "peakRetained": .peakRetained, "peakMetadata": .peakMetadata,
        "peakRSS": .peakRSS, "residue": .residue, "duration": .duration,
        "leakedObjects": .leakedObjects, "growthPerIteration": .growthPerIteration, "exactPeak": .exactPeak,
    ]

    /// True when the figure is a byte count (its limits take size units).
    public var isBytes: Bool {
        switch self {
        case .duration, .metric, .leakedObjects: return false
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
        case .residue, .duration, .metric, .leakedObjects, .growthPerIteration:
            return false
        }
    }

    /// The figure in words, for the report's readings and tables: `peak allocated`, `final database size`.
    public var label: String {
        switch self {
        case .peakAllocated: return "peak allocated"
        case .peakActive: return "peak active"
        case .peakResident: return "peak resident"
        case .peakMapped: return "peak mapped"
        case .peakRetained: return "peak retained"
        case .peakMetadata: return "peak metadata"
        case .peakRSS: return "peak RSS"
        case .residue: return "residue"
        case .duration: return "duration"
        case .phasePeakAllocated(let phase): return "peak allocated in `\(phase)`"
        case .metric(let name): return "`\(name)`"
        case .leakedObjects: return "leaked objects"
        case .growthPerIteration: return "growth per iteration"
        case .exactPeak: return "exact peak"
        }
    }

    /// Formats a value of this figure for messages; a metric in its own unit when `unit` is known.
    public func format(_ value: Double, unit: Metric.Unit? = nil) -> String {
        switch self {
        case .duration: return "\(Units.fixed(value, decimals: 1)) ms"
        case .leakedObjects: return Units.fixed(value, decimals: value == value.rounded() ? 0 : 1)
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

/// A comparison operator of a threshold.
public enum Comparison: String, Sendable, Hashable, Codable, CaseIterable {
    case lessOrEqual = "<="
    case less = "<"
    case greaterOrEqual = ">="
    case greater = ">"
    case equal = "=="

    public func holds(_ left: Double, _ right: Double) -> Bool {
        switch self {
        case .lessOrEqual: return left <= right
        case .less: return left < right
        case .greaterOrEqual: return left >= right
        case .greater: return left > right
        case .equal: return left == right
        }
    }
}

/// A limit stated in a scenario file, checked on the median of the repetitions.
public struct Threshold: Sendable, Hashable, Codable {
    /// What the limit is: a fixed value, or a factor of another strategy's figure.
    public enum Limit: Sendable, Hashable, Codable {
        case absolute(Double)
        case relative(factor: Double, of: FigureReference)
    }
    public var subject: FigureReference
    public var comparison: Comparison
    public var limit: Limit
    /// The threshold as written, e.g. `signal-next.peakAllocated <= 0.1 * unbounded-dispatch.peakAllocated`.
    public var text: String
    /// Where it is written: file, line and column.
    public var file: String
    public var line: Int
    public var column: Int

    public init(
        subject: FigureReference, comparison: Comparison, limit: Limit, text: String, file: String, line: Int,
        column: Int
    ) {
        self.subject = subject
        self.comparison = comparison
        self.limit = limit
        self.text = text
        self.file = file
        self.line = line
        self.column = column
    }
}

/// The outcome of one check (a threshold, a baseline comparison or a leak expectation).
public struct CheckResult: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case threshold, baseline, leak
    }
    public var kind: Kind
    public var scenario: String
    public var strategy: String
    /// A short name for the check, e.g. `signal-next.peakAllocated <= 32.00 MiB`.
    public var name: String
    public var passed: Bool
    /// The measured value, formatted (median over repetitions).
    public var actual: String
    /// The limit it was held to, formatted.
    public var limit: String
    /// How far inside (positive) or beyond (negative) the limit, as text (e.g. `+12.3%`).
    public var margin: String
    /// The full message for a failure: what, by how much, where to look.
    public var message: String
    /// Spread of the repetitions for the checked figure, percent, when known.
    public var spreadPercent: Double?
    /// Where the check is declared (file:line:column), when it comes from a file.
    public var file: String?
    public var line: Int?
    public var column: Int?

    public init(
        kind: Kind, scenario: String, strategy: String, name: String, passed: Bool, actual: String, limit: String,
        margin: String, message: String, spreadPercent: Double? = nil, file: String? = nil, line: Int? = nil,
        column: Int? = nil
    ) {
        self.kind = kind
        self.scenario = scenario
        self.strategy = strategy
        self.name = name
        self.passed = passed
        self.actual = actual
        self.limit = limit
        self.margin = margin
        self.message = message
        self.spreadPercent = spreadPercent
        self.file = file
        self.line = line
        self.column = column
    }
}

/// Evaluates thresholds on the median of each strategy's `ok` repetitions.
public enum ThresholdEvaluator {
    /// Median and spread of a figure over a strategy's `ok` cases; nil when none has it.
    public static func median(_ reference: FigureReference, in run: ScenarioRun) -> (median: Double, spread: Double?)? {
        let values = values(reference, in: run)
        guard let median = Statistics.median(values) else { return nil }
        return (median, Statistics.spreadPercent(values))
    }

    /// The figure's values over a strategy's `ok` cases, in run order.
    public static func values(_ reference: FigureReference, in run: ScenarioRun) -> [Double] {
        run.cases.filter { $0.strategy == reference.strategy }.compactMap { reference.figure.value(in: $0) }
    }

    /// Checks every threshold whose strategies ran here; one naming a strategy without any case in
    /// this run (another shard ran it) is skipped, not failed.
    public static func evaluate(_ thresholds: [Threshold], in run: ScenarioRun) -> [CheckResult] {
        let ran = Set(run.cases.map(\.strategy))
        return thresholds.filter { threshold in
            guard ran.contains(threshold.subject.strategy) else { return false }
            if case .relative(_, let other) = threshold.limit { return ran.contains(other.strategy) }
            return true
        }.map { evaluate($0, in: run) }
    }

    public static func evaluate(_ threshold: Threshold, in run: ScenarioRun) -> CheckResult {
        let figure = threshold.subject.figure
        let unit: Metric.Unit? = {
            guard case .metric(let name) = figure else { return nil }
            return run.cases.lazy.compactMap { $0.metric(name)?.unit }.first
        }()
        func format(_ value: Double, _ figure: Figure) -> String { figure.format(value, unit: unit) }
        func result(passed: Bool, actual: String, limit: String, margin: String, message: String, spread: Double? = nil)
            -> CheckResult
        {
            CheckResult(
                kind: .threshold, scenario: run.name, strategy: threshold.subject.strategy, name: threshold.text,
                passed: passed,
                actual: actual, limit: limit, margin: margin, message: message, spreadPercent: spread,
                file: threshold.file, line: threshold.line, column: threshold.column)
        }
        guard let subject = median(threshold.subject, in: run) else {
            return result(
                passed: false, actual: "–", limit: "–", margin: "–",
                message:
                    "\(threshold.subject) has no value: no completed case of `\(threshold.subject.strategy)` "
                    + "reports \(figure)"
            )
        }
        let limitValue: Double
        let limitText: String
        switch threshold.limit {
        case .absolute(let value):
            limitValue = value
            limitText = format(value, figure)
        case .relative(let factor, let other):
            guard let base = median(other, in: run) else {
                return result(
                    passed: false, actual: format(subject.median, figure), limit: "–", margin: "–",
                    message: "\(other) has no value: no completed case of `\(other.strategy)` reports \(other.figure)")
            }
            limitValue = factor * base.median
            limitText =
                "\(format(limitValue, figure)) "
                + "(\(Units.fixed(factor, decimals: factor == factor.rounded() ? 0 : 2)) × \(other) = "
                + "\(format(base.median, other.figure)))"
        }
        let passed = threshold.comparison.holds(subject.median, limitValue)
        let margin = margin(
            subject.median, limit: limitValue, comparison: threshold.comparison,
            formatted: format(subject.median, figure))
        let message =
            passed
            ? "\(threshold.subject) = \(format(subject.median, figure)) \(threshold.comparison.rawValue) \(limitText)"
            : "\(threshold.subject) = \(format(subject.median, figure)) breaks `\(threshold.text)` (limit "
                + "\(limitText), off by \(margin)); see the `\(run.name)` section of report.md and "
                + "\(threshold.file):\(threshold.line)"
        return result(
            passed: passed, actual: format(subject.median, figure),
            limit: "\(threshold.comparison.rawValue) \(limitText)",
            margin: margin, message: message, spread: subject.spread)
    }

    /// How far inside (+) or outside (−) the limit `value` is, in percent of the limit; with a limit of 0,
    /// "0" or the value itself (`formatted`).
    static func margin(_ value: Double, limit: Double, comparison: Comparison, formatted: String) -> String {
        guard limit != 0 else { return value == 0 ? "0" : formatted }
        let relative = (limit - value) / abs(limit) * 100
        let inside = [.lessOrEqual, .less, .equal].contains(comparison) ? relative : -relative
        return (inside >= 0 ? "+" : "") + Units.fixed(inside, decimals: 1) + "%"
    }
}
