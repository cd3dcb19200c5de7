import FileIO
import Foundation
import HarnessModel
import Reports
import Testing

/// The harness's own allocations (its sampler's buffers, the tracking of objects, the naming and analysis of heap
/// captures) are never charged to the user: on a strategy that allocates almost nothing, run with `--attribute` and
/// `--heap-graph`, no allocation site names a function of memharness's own modules. The run must first show that it
/// sees the user's one block (else an empty report would pass).
@Suite(.serialized, .timeLimit(.minutes(4)))
struct HarnessOwnAllocationsTests {
    /// Swift module prefixes of the harness's own code (the case process runs the harness's runner, measurement,
    /// naming and analysis beside the workload), and the agent's C functions.
    static let harnessMarkers = [
        "Measurement.", "HeapGraph.", "Runner.", "Reports.", "HarnessModel.", "Symbols.", "SwiftReflection.",
        "Attribution.", "WorkloadKit.", "MemHarness.", "Scenarios.", "FileIO.", "ChildProcesses.", "mh_",
        "memharness_agent", "CaseHeapGraph", "CaseContext",
    ]

    @Test func noSiteTypeOrPathOfANearEmptyStrategyIsTheHarnesss() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        // One block of 1 MiB (sampled with near certainty at the 64 KiB mean), freed at release.
        let scenario = try trial.script(
            "near-empty.yaml",
            """
            scenario: near-empty
            workload: calibration
            parameters:
              holdSize: 1MiB
            strategies:
              - hold-large
            steps:
              - allocate
              - release
            repetitions: 1

            """, mode: 0o644)
        let outcome = try trial.memharness(["run", scenario, "--attribute", "--heap-graph", "--out", trial.out])
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        let record = try ReportFolder.read(trial.out)
        let measurements = record.report.scenarios.flatMap(\.instrumentedCases).compactMap(\.measurements)
        var sampled = Names()
        sampled.collect(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(measurements.compactMap(\.profile))))
        var graphed = Names()
        graphed.collect(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(measurements.compactMap(\.heapGraph))))
        // The probe sees the user's block: its allocation site is the workload's; the heap was captured.
        #expect(sampled.sites.contains { $0.contains("Calibration") }, "sites: \(sampled.sites.sorted())")
        #expect(!graphed.types.isEmpty, "no heap graph types")
        // --attribute: no sampled site is the harness's.
        #expect(Self.harnesss(sampled.sites).isEmpty, "the harness's own sites: \(Self.harnesss(sampled.sites))")
        // --heap-graph in a workload's case process: the capture holds every live block of the process, the harness's
        // runner, sampler and case context among them; those its own code allocated are set aside by their stacks.
        #expect(Self.harnesss(graphed.types).isEmpty, "the harness's own types: \(Self.harnesss(graphed.types))")
        #expect(Self.harnesss(graphed.sites).isEmpty, "the harness's own sites: \(Self.harnesss(graphed.sites))")
    }

    static func harnesss(_ names: Set<String>) -> [String] {
        names.filter { name in harnessMarkers.contains { name.contains($0) } }.sorted()
    }

    /// Every allocation site (an attributed site's function, an unnamed block's site, a leak group's first frame) and
    /// every type name (tallies, groups, cycles, retaining paths) in a run's measurements, read from their JSON.
    struct Names {
        var sites: Set<String> = []
        var types: Set<String> = []

        mutating func collect(_ value: Any) {
            if let array = value as? [Any] {
                for element in array { collect(element) }
                return
            }
            guard let object = value as? [String: Any] else { return }
            if let function = object["function"] as? String, object["module"] != nil { sites.insert(function) }
            if let name = object["name"] as? String, object["kind"] != nil {
                if !name.isEmpty { types.insert(name) }
                if let site = object["allocationSite"] as? String { sites.insert(site) }
            }
            if let stack = object["allocationStack"] as? [String], let first = stack.first { sites.insert(first) }
            for child in object.values { collect(child) }
        }
    }
}
