import ArgumentParser
import HarnessCore
import HarnessModel

/// `--memory-limit`, `--memory-warning`, `--footprint`, `--device`: run cases under a device's memory budget.
struct MemoryBudgetArguments: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Stop a case when its footprint exceeds this, e.g. 300MiB (overrides the files' memoryLimit; none: no limit).",
        valueName: "size"))
    var memoryLimit: String?

    @Option(name: .long, help: ArgumentHelp(
        "Post a memory warning to the case when its footprint reaches this: a share of the limit (80%) or a size (240MiB); none: no warnings.",
        valueName: "level"))
    var memoryWarning: String?

    @Option(name: .long, help: ArgumentHelp(
        "The footprint compared with the limit and warning: allocated (jemalloc stats.allocated) or resident (the kernel's RSS).",
        valueName: "figure"))
    var footprint: FootprintMeasure = .allocated

    @Option(name: .long, help: ArgumentHelp(
        "Run under a phone's memory budget (limit and a warning at 80% of it): \(DeviceProfile.builtIn.map(\.name).joined(separator: ", ")).",
        valueName: "name"))
    var device: String?

    @Flag(name: .long, help: "Exit with 2 (a finding) when a case is killed by its memory limit; without it a kill is a result in the report.")
    var failOnMemoryLimit = false

    func validate() throws {
        _ = try options()
    }

    /// The options, or a usage error naming the bad value and the valid ones.
    func options() throws -> MemoryOptions {
        var options = MemoryOptions(footprint: footprint)
        if let memoryLimit {
            if memoryLimit == "none" {
                options.limit = .off
            } else if let bytes = Units.parseBytes(memoryLimit), bytes >= 1 << 20 {
                options.limit = .value(bytes)
            } else {
                throw ValidationError("--memory-limit '\(memoryLimit)': expected a size of at least 1MiB, e.g. 300MiB, 1.5GiB, or none")
            }
        }
        if let memoryWarning {
            if memoryWarning == "none" {
                options.warning = .off
            } else if let level = MemoryLevel.parse(memoryWarning) {
                options.warning = .value(level)
            } else {
                throw ValidationError("--memory-warning '\(memoryWarning)': expected a share of the limit (1%...100%, e.g. 80%), a size (e.g. 240MiB), or none")
            }
        }
        if let device {
            guard let profile = DeviceProfile.named(device) else {
                throw ValidationError("--device '\(device)': unknown device; expected one of: \(DeviceProfile.builtIn.map(\.name).joined(separator: ", "))")
            }
            options.device = profile
        }
        return options
    }
}

extension FootprintMeasure: ExpressibleByArgument {}
