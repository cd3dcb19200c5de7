import HarnessModel
import Measurement
import Scenarios
import WorkloadKit

/// A memory level set on the command line: keep the scenario file's, turn it off, or set it.
public enum BudgetSetting<Value: Sendable & Hashable>: Sendable, Hashable {
    /// Use the scenario file's value (or the device's, when `--device` is given).
    case fromScenario
    /// No level, whatever the file says (`none`).
    case off
    /// This value.
    case value(Value)
}

/// The memory budget options of a run, applied over each scenario file's `memoryLimit:` and
/// `memoryWarning:`. Precedence: an explicit option, then the device profile, then the file.
public struct MemoryOptions: Sendable, Hashable {
    /// `--memory-limit`.
    public var limit: BudgetSetting<Int> = .fromScenario
    /// `--memory-warning`.
    public var warning: BudgetSetting<MemoryLevel> = .fromScenario
    /// `--footprint`: the figure compared with the levels.
    public var footprint: FootprintMeasure = .allocated
    /// `--device`: sets the limit and the warning level unless given explicitly.
    public var device: DeviceProfile?

    public init(
        limit: BudgetSetting<Int> = .fromScenario, warning: BudgetSetting<MemoryLevel> = .fromScenario,
        footprint: FootprintMeasure = .allocated, device: DeviceProfile? = nil
    ) {
        self.limit = limit
        self.warning = warning
        self.footprint = footprint
        self.device = device
    }

    /// The limit and warning level for `scenario` before a share is turned into bytes.
    private func levels(for scenario: ScenarioSpec) -> (limit: Int?, warning: MemoryLevel?) {
        let limit: Int?
        switch self.limit {
        case .off: limit = nil
        case .value(let bytes): limit = bytes
        case .fromScenario: limit = device?.limitBytes ?? scenario.memoryLimitBytes
        }
        let warning: MemoryLevel?
        switch self.warning {
        case .off: warning = nil
        case .value(let level): warning = level
        case .fromScenario: warning = device.map { .fractionOfLimit($0.warningFraction) } ?? scenario.memoryWarning
        }
        return (limit, warning)
    }

    /// The budget cases of `scenario` run under; nil when there is neither a limit nor warnings.
    public func budget(for scenario: ScenarioSpec) -> MemoryBudget? {
        let (limit, warning) = levels(for: scenario)
        let budget = MemoryBudget(footprint: footprint, limitBytes: limit, warningBytes: warning?.bytes(limit: limit))
        return budget.isEmpty ? nil : budget
    }

    /// What does not fit together, one message per scenario: a warning given as a share with no
    /// limit to take it from, or a warning level above the limit. A warning the file set is named at its
    /// `memoryWarning:` key's line and column.
    public func problems(for scenarios: [ScenarioSpec]) -> [String] {
        scenarios.compactMap { scenario in
            let (limit, warning) = levels(for: scenario)
            let fileSetsWarning = self.warning == .fromScenario && device == nil && scenario.memoryWarning != nil
            let place = fileSetsWarning ? scenario.location(ofKey: "memoryWarning").description : scenario.file
            if case .fractionOfLimit(let fraction)? = warning, limit == nil {
                return
                    "\(place): the memory warning is \(Units.fixed(fraction * 100, decimals: 0))% of the limit, but "
                    + "there is no "
                    + "memory limit; set one (--memory-limit, memoryLimit:, --device) or give the warning as a "
                    + "size, e.g. --memory-warning 240MiB"
            }
            if let limit, let bytes = warning?.bytes(limit: limit), bytes > limit {
                return
                    "\(place): the memory warning \(Units.formatBytes(bytes)) is above the memory limit "
                    + "\(Units.formatBytes(limit)); a warning must come before the limit, e.g. --memory-warning 80%"
            }
            return nil
        }
    }
}
