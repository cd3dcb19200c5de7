import ArgumentParser
import Foundation
import HarnessModel
import Reports
import Runner

/// A duration option value such as `1ms`, `500us`, `2s`.
struct DurationArgument: ExpressibleByArgument, Sendable {
    var duration: Duration

    init?(argument: String) {
        guard let nanoseconds = Units.parseDurationNanoseconds(argument) else { return nil }
        duration = .nanoseconds(nanoseconds)
    }

    init(_ duration: Duration) { self.duration = duration }

    /// The shortest exact spelling: `1ms`, `500us`, `2s`.
    var defaultValueDescription: String {
        let nanoseconds = duration.nanoseconds
        let units: [(String, Int64)] = [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)]
        for (unit, scale) in units where nanoseconds % scale == 0 && nanoseconds >= scale {
            return "\(nanoseconds / scale)\(unit)"
        }
        return "\(nanoseconds)ns"
    }
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

/// `--repeat N` or `--repeat auto`.
struct RepetitionArgument: ExpressibleByArgument, Sendable {
    var policy: RepetitionPolicy
    init?(argument: String) {
        if argument == "auto" {
            policy = .auto(AdaptiveRepetitions())
        } else if let count = Int(argument) {
            policy = .fixed(count)
        } else {
            return nil
        }
    }
}

/// A size option such as `256KiB`.
struct SizeArgument: ExpressibleByArgument, Sendable {
    var bytes: Int
    init(_ bytes: Int) { self.bytes = bytes }
    init?(argument: String) {
        guard let value = Units.parseBytes(argument) else { return nil }
        bytes = value
    }
    var defaultValueDescription: String {
        Units.formatBytes(bytes).replacingOccurrences(of: ".00 ", with: "").replacingOccurrences(of: " ", with: "")
    }
}

/// `--jobs N` or `--jobs auto` (the number of CPUs this process may run on).
enum JobsArgument: ExpressibleByArgument, Sendable {
    case auto
    case count(Int)

    init?(argument: String) {
        if argument == "auto" {
            self = .auto
        } else if let count = Int(argument) {
            self = .count(count)
        } else {
            return nil
        }
    }

    var count: Int {
        switch self {
        case .auto: return max(ProcessInfo.processInfo.activeProcessorCount, 1)
        case .count(let count): return count
        }
    }

    var defaultValueDescription: String { "auto" }
}

extension Shard: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

extension PeakMode: ExpressibleByArgument {}
extension FootprintMeasure: ExpressibleByArgument {}

/// `--chart-scale auto|linear|log`.
enum ChartScaleArgument: String, ExpressibleByArgument, CaseIterable {
    case auto, linear, log

    var scale: ValueScale? {
        switch self {
        case .auto: return nil
        case .linear: return .linear
        case .log: return .log
        }
    }
}

/// `--memory-limit`, `--memory-warning`, `--footprint`, `--device`: run cases under a device's memory budget.
struct MemoryBudgetArguments: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Stop a case when its footprint exceeds this, e.g. 300MiB (overrides the files' memoryLimit; none: no limit).",
            valueName: "size"))
    var memoryLimit: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Post a memory warning to the case when its footprint reaches this: a share of the limit (80%) or a size "
                + "(240MiB); none: no warnings.",
            valueName: "level"))
    var memoryWarning: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The footprint compared with the limit and warning: allocated (jemalloc stats.allocated) or resident "
                + "(the kernel's RSS).",
            valueName: "figure"))
    var footprint: FootprintMeasure = .allocated

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run under a phone's memory budget (limit and a warning at 80% of it): "
                + "\(DeviceProfile.builtIn.map(\.name).joined(separator: ", ")).",
            valueName: "name"))
    var device: String?

    @Flag(
        name: .long,
        help:
            "Exit with 2 (a finding) when a case is killed by its memory limit; without it a kill is a result in the report."
    )
    var failOnMemoryLimit = false

    func validate() throws { _ = try options() }

    /// The options, or a usage error naming the bad value and the valid ones.
    func options() throws -> MemoryOptions {
        var options = MemoryOptions(footprint: footprint)
        if let memoryLimit {
            if memoryLimit == "none" {
                options.limit = .off
            } else if let bytes = Units.parseBytes(memoryLimit), bytes >= 1 << 20 {
                options.limit = .value(bytes)
            } else {
                throw ValidationError(
                    "--memory-limit '\(memoryLimit)': expected a size of at least 1MiB, e.g. 300MiB, 1.5GiB, or none")
            }
        }
        if let memoryWarning {
            if memoryWarning == "none" {
                options.warning = .off
            } else if let level = MemoryLevel.parse(memoryWarning) {
                options.warning = .value(level)
            } else {
                throw ValidationError(
                    "--memory-warning '\(memoryWarning)': expected a share of the limit (1%...100%, e.g. 80%), "
                        + "a size (e.g. 240MiB), or none")
            }
        }
        if let device {
            guard let profile = DeviceProfile.named(device) else {
                throw ValidationError(
                    "--device '\(device)': unknown device; expected one of: "
                        + DeviceProfile.builtIn.map(\.name).joined(separator: ", ")
                        + suggestion(device, DeviceProfile.builtIn.map(\.name)))
            }
            options.device = profile
        }
        return options
    }
}

/// Options shared by `run`, `compare` and `merge`: what to check and where to publish the checks.
struct GateOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Compare the medians with this baseline file (see `baseline save`).", valueName: "file"))
    var baseline: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Relative change tolerated against the baseline, for every figure (default: each figure's tolerance "
                + "derived from its noise by `baseline save`, else 10%).",
            valueName: "percent"))
    var tolerance: PercentArgument?

    @Option(
        name: .long,
        help: ArgumentHelp("Absolute change tolerated against the baseline whatever the ratio.", valueName: "size"))
    var floor: SizeArgument = SizeArgument(256 * 1024)

    @Flag(name: .long, help: "Also fail when a figure improved outside the noise and beyond the floor.")
    var failOnImprovement = false

    @Option(name: .long, help: ArgumentHelp("Write the checks as JUnit XML to this file.", valueName: "file"))
    var junit: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Write median peaks in github-action-benchmark's customSmallerIsBetter JSON to this file.",
            valueName: "file"))
    var json: String?

    /// The gate policy these options describe.
    func policy(checkThresholds: Bool = true, failOnMemoryLimit: Bool = false) -> GatePolicy {
        GatePolicy(
            checkThresholds: checkThresholds,
            baseline: BaselinePolicy(
                tolerance: tolerance?.fraction, floorBytes: Double(floor.bytes), failOnImprovement: failOnImprovement),
            failOnMemoryLimit: failOnMemoryLimit)
    }

    /// Ends the command with the usage status when `--junit` or `--json` names a place no file can be
    /// written: checked before any work, as they are written after it.
    func checkOutputFiles() throws {
        for (option, path) in [("--junit", junit), ("--json", json)] {
            guard let path, let problem = RunPreflight.outputFileProblem(path, option: option) else { continue }
            throw Terminal.fail(problem, status: .usage)
        }
    }

    /// Reads the baseline file, before any work; a bad one ends the command with the usage status.
    func loadBaseline() throws -> BaselineReference? {
        guard let baseline else { return nil }
        do {
            return BaselineReference(baseline: try BaselineFile.read(baseline), file: baseline)
        } catch {
            throw Terminal.fail(error.description, status: error.exitStatus)
        }
    }
}
