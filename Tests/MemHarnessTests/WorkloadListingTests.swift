import TestSupport
import Testing
import WorkloadKit

@testable import MemHarness

/// The text of `memharness list`.
struct WorkloadListingTests {
    @Test func listsEachWorkloadsStrategiesParametersStepsMetricsAndGauges() throws {
        let text = WorkloadListing.render(WorkloadCatalog([ExampleWorkload()]))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "example: For tests.")
        let column = String(repeating: " ", count: 4)
        #expect(lines.contains("  strategies:"))
        #expect(lines.contains(column + "unbounded-dispatch".padding(26) + " bad"))
        #expect(lines.contains(column + "payloadSize".padding(26) + " default 4.00 KiB, range 0 B...1.00 GiB. payload"))
        #expect(lines.contains(column + "matchingShare".padding(26) + " default 50%, range 0%...100%. share"))
        #expect(lines.contains(column + "burst".padding(26) + " write [duration=1.00 s]"))
        #expect(lines.contains(column + "callbacks".padding(26) + " callbacks delivered (count)"))
        #expect(lines.contains(column + "pending".padding(26) + " queue depth"))
        // The built-in steps follow the workload's own.
        let steps = try #require(lines.firstIndex(of: "  steps:"))
        let builtIn = BuiltInStep.all.map(\.name)
        #expect(builtIn.allSatisfy { name in lines[steps...].contains { $0.hasPrefix(column + name + " ") } })
        #expect(lines.last == "", "each workload ends with an empty line")
    }

    @Test func aNameLongerThanTheColumnIsKeptWhole() {
        let text = WorkloadListing.render(WorkloadCatalog([ExampleWorkload()]))
        #expect(!text.contains("unbounded-dispatc "), "no name is cut")
        #expect(WorkloadListing.render(WorkloadCatalog([])) == "")
    }
}

extension String {
    /// Padded with spaces to `width`.
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
