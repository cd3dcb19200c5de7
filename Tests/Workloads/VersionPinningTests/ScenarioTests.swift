import Foundation
import Measurement
import Runner
import Scenarios
import TestSupport
import Testing
import VersionPinningWorkload
import WorkloadKit

extension SQLiteWorkloadTests {
    @Suite struct Scenarios {
        static let catalog = WorkloadCatalog([VersionPinningWorkload(), CompactionWorkload()])

        /// The package's `Scenarios` directory, found from this file's place in the package.
        static let directory = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Scenarios")

        static func parse(_ name: String) throws -> ScenarioSpec {
            let url = directory.appendingPathComponent(name)
            return try ScenarioParser(catalog: catalog).parse(String(contentsOf: url, encoding: .utf8), file: url.path)
        }

        @Test(arguments: ["version-pinning.yaml", "compaction.yaml"])
        func shippedScenarioListsEveryStrategy(file: String) throws {
            let spec = try Self.parse(file)
            let workload = try #require(Self.catalog.workload(named: spec.workload))
            #expect(spec.strategies.map(\.name) == workload.descriptor.strategies.map(\.name))
        }

        /// The harness's own runner samples the gauges the writer sets and collects the metrics.
        @Test func caseExecutorSamplesTheFileGauges() throws {
            var spec = try Self.parse("version-pinning.yaml")
            spec.strategies = spec.strategies.filter { $0.name == "pinned-reader" }
            var options = RunOptions(interval: .milliseconds(5), repetitions: 1)
            options.quick = true
            let caseSpec = try #require(RunPlanner.cases(of: spec, options: options).first)
            let scratch = try ScratchDirectory()
            let result = try CaseExecutor(catalog: Self.catalog).measure(caseSpec, scratchDirectory: scratch.path)
            // The shipped steps (a burst and a passive checkpoint) report every metric but the TRUNCATE-only one.
            expectMetrics(result.metrics, declaredBy: VersionPinningWorkload().descriptor, complete: false)
            #expect(
                Set(VersionPinningWorkload().descriptor.metrics.map(\.name)).subtracting(result.metrics.map(\.name))
                    .isSubset(of: ["stepCheckpointBusy"]))

            let samples = try #require(result.samples)
            let walColumn = try #require(samples.gaugeNames.firstIndex(of: "walBytes"))
            let sampledPeak = try #require(samples.gauges[walColumn].max())
            let peak = try #require(result.metric("peakWalBytes")?.value)
            #expect(sampledPeak > 0)
            #expect(Double(sampledPeak) <= peak)
            // The scenario ends without a truncating checkpoint: the grown file stays, and the report shows it.
            let growth = try #require(result.metric("fileGrowth")?.value)
            #expect(growth > 0)
            #expect(
                result.metric("finalWalBytes")?.value == result.metric("walBytesAfterBurst")?.value, "nothing shrank it"
            )
            let fileColumn = try #require(samples.gaugeNames.firstIndex(of: "fileBytes"))
            #expect(try #require(samples.gauges[fileColumn].max()) > 0)
        }
    }
}
