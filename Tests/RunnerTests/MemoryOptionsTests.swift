import HarnessModel
import Runner
import Scenarios
import TestSupport
import Testing
import WorkloadKit

/// How the run's memory options, device profiles and a file's budget combine.
struct MemoryOptionsTests {
    /// A parsed scenario with these memory keys.
    func scenario(limit: String? = nil, warning: String? = nil) throws -> ScenarioSpec {
        var text = "scenario: s\nworkload: example\n"
        if let limit { text += "memoryLimit: \(limit)\n" }
        if let warning { text += "memoryWarning: \(warning)\n" }
        return try ScenarioParser(catalog: WorkloadCatalog([ExampleWorkload()])).parse(text, file: "Scenarios/s.yaml")
    }

    @Test func optionsOverrideTheDeviceWhichOverridesTheFile() throws {
        let file = try scenario(limit: "300MiB", warning: "50%")
        #expect(MemoryOptions().budget(for: file) == MemoryBudget(limitBytes: 300 << 20, warningBytes: 150 << 20))
        #expect(MemoryOptions().budget(for: try scenario()) == nil)

        let device = try #require(DeviceProfile.named("iphone-6"))
        let onDevice = MemoryOptions(footprint: .resident, device: device).budget(for: file)
        #expect(
            onDevice
                == MemoryBudget(
                    footprint: .resident, limitBytes: 645 << 20, warningBytes: Int((Double(645 << 20) * 0.8).rounded()))
        )

        let explicit = MemoryOptions(limit: .value(100 << 20), warning: .off, device: device).budget(for: file)
        #expect(explicit == MemoryBudget(limitBytes: 100 << 20, warningBytes: nil))
        #expect(MemoryOptions(limit: .off, warning: .off).budget(for: file) == nil)
    }

    @Test func aShareWithoutALimitAndAWarningAboveTheLimitAreProblems() throws {
        let shareOnly = try scenario(warning: "80%")
        // The file's warning is named at its key (line 3, column 1); a command line's at the file alone.
        #expect(
            MemoryOptions().problems(for: [shareOnly])
                == [
                    "Scenarios/s.yaml:3:1: the memory warning is 80% of the limit, but there is no memory limit; set "
                        + "one (--memory-limit, memoryLimit:, --device) or give the warning as a size, e.g. "
                        + "--memory-warning 240MiB"
                ])
        let fromCommandLine = MemoryOptions(warning: .value(.fractionOfLimit(0.5))).problems(for: [try scenario()])
        #expect(fromCommandLine.first?.hasPrefix("Scenarios/s.yaml: the memory warning is 50% of the limit") == true)
        #expect(MemoryOptions(limit: .value(1 << 30)).problems(for: [shareOnly]).isEmpty)
        let above = MemoryOptions(limit: .value(100 << 20), warning: .value(.bytes(200 << 20))).problems(for: [
            try scenario()
        ])
        #expect(above.first?.contains("is above the memory limit") == true)
    }

    @Test func deviceProfilesAreOrderedAndNamedUniquely() {
        let names = DeviceProfile.builtIn.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(DeviceProfile.builtIn.allSatisfy { $0.limitBytes > 100 << 20 && $0.warningFraction < 1 })
        #expect(DeviceProfile.named("IPHONE-4S")?.limitBytes == 286 << 20)
    }
}
