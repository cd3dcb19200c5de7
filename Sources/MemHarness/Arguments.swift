import ArgumentParser
import FileIO
import HarnessModel
import Reports
import Runner
import Verdicts

/// A duration option value such as `1ms`, `500us`, `2s`.
///
/// A negative one (`-1ms`) is read as such, for `validate()` to refuse it naming the range: the options that
/// take one parse their value unconditionally, as argument-parser would otherwise take `-1ms` for an option
/// and answer "Missing value".
struct DurationArgument: ExpressibleByArgument, Sendable {
    var duration: Duration
    init(_ duration: Duration) { self.duration = duration }
    init?(argument: String) {
        let negative = argument.hasPrefix("-")
        guard let nanoseconds = Units.parseDurationNanoseconds(negative ? String(argument.dropFirst()) : argument)
        else { return nil }
        duration = .nanoseconds(negative ? -nanoseconds : nanoseconds)
    }
    var defaultValueDescription: String { Units.formatDurationExactly(nanoseconds: duration.nanoseconds) }
}

/// A percentage option such as `10%` (or a fraction such as `0.1`).
struct PercentArgument: ExpressibleByArgument, Sendable {
    var fraction: Double
    init(_ fraction: Double) { self.fraction = fraction }
    init?(argument: String) {
        guard let value = Units.parseFraction(argument), value >= 0, value.isFinite else { return nil }
        fraction = value
    }
    var defaultValueDescription: String { Units.fixed(fraction * 100, decimals: 0) + "%" }
}

/// A size option such as `256KiB`.
struct SizeArgument: ExpressibleByArgument, Sendable {
    var bytes: Int
    init(_ bytes: Int) { self.bytes = bytes }
    init?(argument: String) {
        guard let value = Units.parseBytes(argument) else { return nil }
        bytes = value
    }
    var defaultValueDescription: String { Units.formatBytesAsOption(bytes) }
}

extension JobCount: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
    public var defaultValueDescription: String { "auto" }
}

extension ShardChoice: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

extension RepetitionPolicy: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

extension PeakMode: ExpressibleByArgument {}
extension Allocator: ExpressibleByArgument {}
extension FootprintMeasure: ExpressibleByArgument {}

extension ValidationError {
    /// Throws `problem` as a usage error, if there is one.
    static func check(_ problem: String?) throws { if let problem { throw ValidationError(problem) } }
}

extension ArgumentHelp {
    /// Help for an option that takes a value named `name`: `--out <dir>`.
    static func value(_ name: String, _ abstract: String) -> ArgumentHelp { ArgumentHelp(abstract, valueName: name) }
}

/// `--memory-limit`, `--memory-warning`, `--footprint`, `--device`: run cases under a device's memory budget.
struct MemoryBudgetArguments: ParsableArguments {
    @Option(help: .value("size", "Stop a case when its footprint exceeds this, e.g. 300MiB; none: no limit."))
    var memoryLimit: String?
    @Option(
        help: .value("level", "Memory warning at this footprint: a share of the limit (80%), a size (240MiB) or none."))
    var memoryWarning: String?
    @Option(help: .value("figure", "The footprint: allocated (jemalloc stats.allocated) or resident (RSS)."))
    var footprint: FootprintMeasure = .allocated
    @Option(
        help: .value("name", "Run under a phone's budget (its limit, a warning at 80%): " + DeviceProfile.names + "."))
    var device: String?
    @Flag(help: "Exit with 2 (a finding) when a case is killed by its memory limit, not only report it.")
    var failOnMemoryLimit = false

    func validate() throws { _ = try options() }

    /// The options, over the files' `memoryLimit:` and `memoryWarning:`; a usage error names a bad value.
    func options() throws -> MemoryOptions {
        do {
            return try MemoryOptions(limit: memoryLimit, warning: memoryWarning, footprint: footprint, device: device)
        } catch {
            throw ValidationError(error.description)
        }
    }
}

/// Options shared by `run`, `compare` and `merge`: what to check and where to publish the checks.
struct GateOptions: ParsableArguments {
    @Option(help: .value("file", "Compare the medians with this baseline file (see `baseline save`)."))
    var baseline: String?
    @Option(
        help: .value(
            "percent",
            "Relative change tolerated against the baseline (default: each figure's own, derived from its noise "
                + "by `baseline save`; else 10%)."))
    var tolerance: PercentArgument?
    @Option(help: .value("size", "Absolute change tolerated against the baseline whatever the ratio."))
    var floor = SizeArgument(256 * 1024)
    @Flag(help: "Also fail when a figure improved outside the noise and beyond the floor.")
    var failOnImprovement = false
    @Option(help: .value("file", "Write the checks as JUnit XML to this file."))
    var junit: String?
    @Option(help: .value("file", "Write median peaks as github-action-benchmark customSmallerIsBetter JSON."))
    var json: String?

    /// The gate policy these options describe.
    func policy(checkThresholds: Bool = true, failOnMemoryLimit: Bool = false) -> GatePolicy {
        let baseline = BaselinePolicy(
            tolerance: tolerance?.fraction, floorBytes: Double(floor.bytes), failOnImprovement: failOnImprovement)
        return GatePolicy(checkThresholds: checkThresholds, baseline: baseline, failOnMemoryLimit: failOnMemoryLimit)
    }

    /// Checks that `--junit` and `--json` name places a file can be written (they are written after the work)
    /// and reads the baseline, before any work; a problem ends the command with the usage status.
    func prepare() throws -> BaselineReference? {
        for (option, path) in [("--junit", junit), ("--json", json)] {
            try Terminal.check(path.flatMap { RunPreflight.outputFileProblem($0, option: option) })
        }
        guard let baseline else { return nil }
        return try Terminal.orFail { () throws(ReportError) in try BaselineFile.reference(baseline) }
    }
}
