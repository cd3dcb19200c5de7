import Foundation
import HarnessModel

/// Series recorded from real runs of unchanged programs (`make history-series`, the file
/// Tests/HistoryTests/Fixtures/recorded-series.json): nothing changed between their runs, so every change point
/// found in one is false; a step injected into one must still be found. The detection benchmark (history-bench)
/// and HistoryTests replay the same file: a test checks what the benchmark table says.
public struct RecordedSeries: Sendable, Hashable, Codable {
    /// The subject (a program or the shipped scenarios) and the series: `keeper: keeper / keeper / peakRSS`.
    public var name: String
    public var isBytes: Bool
    /// The figure's median in each run, in run order, in the figure's unit.
    public var values: [Double]

    public init(name: String, isBytes: Bool, values: [Double]) {
        self.name = name
        self.isBytes = isBytes
        self.values = values
    }

    /// The file: its format, how it was made, and the series.
    public struct File: Sendable, Hashable, Codable {
        public static let currentFormat = "memharness-recorded-series/1"
        public var format: String
        /// How the runs were made (machine, load, command).
        public var recorded: String
        public var series: [RecordedSeries]

        public init(recorded: String, series: [RecordedSeries]) {
            format = Self.currentFormat
            self.recorded = recorded
            self.series = series
        }
    }

    /// How far the runs lie apart: the span of their central 80% (10th to 90th percentile) over |median|; nil for
    /// a median of 0. A step larger than this stands out of the noise at every run but a few.
    public var spread: Double? {
        guard let median = Statistics.median(values), median != 0,
            let low = Statistics.percentile(values, 10), let high = Statistics.percentile(values, 90)
        else { return nil }
        return (high - low) / abs(median)
    }

    /// A count of trials and of those where something happened.
    public struct Rate: Sendable, Hashable {
        public var trials = 0
        public var hits = 0

        public init() {}

        mutating func count(_ hit: Bool) {
            trials += 1
            if hit { hits += 1 }
        }

        public static func + (left: Rate, right: Rate) -> Rate {
            var sum = left
            sum.trials += right.trials
            sum.hits += right.hits
            return sum
        }
    }

    /// What the detection found in recorded series: as recorded (every step found is false), and with a step
    /// injected. A step found is a change point or a step of the newest run (`SeriesAnalysis.steps`).
    public struct Trials: Sendable, Hashable {
        /// Series as recorded: those with any step found.
        public var falseSteps = Rate()
        /// The series' histories as they grew, every first k runs from `minimumRuns` to all but the last (what
        /// `history show` and `history gate` said after each run): those with any step found.
        public var falseStepsAsTheyGrew = Rate()
        /// A step injected from a random run on, at least two runs either side (into series whose median is not
        /// 0): those with a change point exactly at the injected run.
        public var foundAtStep = Rate()
        /// The same trials: those with a step found at any other run.
        public var falseBesideStep = Rate()
        /// The same trials in the series quieter than the step (`spread` below it): those found at the step.
        public var foundAtStepInQuiet = Rate()
        /// A step of the newest run alone (the gate's case): those found; and in the quieter series.
        public var foundInNewest = Rate()
        public var foundInNewestInQuiet = Rate()

        public init() {}

        public static func + (left: Trials, right: Trials) -> Trials {
            var sum = left
            sum.falseSteps = left.falseSteps + right.falseSteps
            sum.falseStepsAsTheyGrew = left.falseStepsAsTheyGrew + right.falseStepsAsTheyGrew
            sum.foundAtStep = left.foundAtStep + right.foundAtStep
            sum.falseBesideStep = left.falseBesideStep + right.falseBesideStep
            sum.foundAtStepInQuiet = left.foundAtStepInQuiet + right.foundAtStepInQuiet
            sum.foundInNewest = left.foundInNewest + right.foundInNewest
            sum.foundInNewestInQuiet = left.foundInNewestInQuiet + right.foundInNewestInQuiet
            return sum
        }
    }

    /// The subject of a series: its name up to the colon (`keeper` of `keeper: keeper / keeper / peakRSS`).
    public var subject: String { String(name.prefix { $0 != ":" }) }

    /// `trials` of each subject's series in turn, the subjects sorted, all drawing from `generator`: with the same
    /// seed, what the benchmark prints and HistoryTests checks are the same numbers.
    public static func trialsBySubject<Generator: RandomNumberGenerator>(
        _ series: [RecordedSeries], relativeStep: Double, injections: Int, using generator: inout Generator
    ) -> [(subject: String, trials: Trials)] {
        let subjects = Dictionary(grouping: series, by: \.subject)
        return subjects.keys.sorted().map { subject in
            (
                subject,
                trials(subjects[subject] ?? [], relativeStep: relativeStep, injections: injections, using: &generator)
            )
        }
    }

    /// Analyses `series` as recorded and as they grew, then `injections` times each with every value from a
    /// random run on moved by `relativeStep` × the series' median, and once with the newest run alone moved.
    public static func trials<Generator: RandomNumberGenerator>(
        _ series: [RecordedSeries], relativeStep: Double, injections: Int, minimumRuns: Int = 5,
        settings: ChangePointDetection.Settings = .init(), using generator: inout Generator
    ) -> Trials {
        var result = Trials()
        for entry in series {
            func steps(_ values: [Double]) -> [Int] {
                ChangePointDetection.analyse(values, isBytes: entry.isBytes, settings: settings).steps.map(\.index)
            }
            let values = entry.values
            result.falseSteps.count(!steps(values).isEmpty)
            for count in minimumRuns..<max(values.count, minimumRuns) {
                result.falseStepsAsTheyGrew.count(!steps(Array(values[..<count])).isEmpty)
            }
            guard let spread = entry.spread, let level = Statistics.median(values), values.count >= 4 else { continue }
            func stepped(from index: Int) -> [Double] {
                values.enumerated().map { $0 >= index ? $1 + relativeStep * abs(level) : $1 }
            }
            let quiet = spread < relativeStep
            for _ in 0..<injections {
                let index = Int.random(in: 2...(values.count - 2), using: &generator)
                let found = steps(stepped(from: index))
                result.foundAtStep.count(found.contains(index))
                result.falseBesideStep.count(found.contains { $0 != index })
                if quiet { result.foundAtStepInQuiet.count(found.contains(index)) }
            }
            let newest = steps(stepped(from: values.count - 1)).contains(values.count - 1)
            result.foundInNewest.count(newest)
            if quiet { result.foundInNewestInQuiet.count(newest) }
        }
        return result
    }
}
