import AllocatorProbe
import FileIO
import Foundation
import Measurement
import Reports
import Runner
import Testing
import WorkloadKit

/// Exact peak mode end to end, on the built binaries: `memharness run --peak exact` launches its
/// cases with the agent (`libmemharness-agent.so`) preloaded, whose malloc family counts every
/// allocation. No test target loads the agent (it would count the test bundle's allocations too), so
/// these tests drive the binaries.
/// Truths come from jemalloc (`nallocx`), never from written-down numbers.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct ExactPeakTests {
    let cli = CommandLineTests()
    static let agentLibrary = CommandLineTests.binary(named: "libmemharness-agent.so")

    /// Runs `yaml` (a scenario file's text) with `arguments` and returns summary.csv's rows keyed by column.
    func run(_ yaml: String, _ arguments: [String] = []) throws -> [[String: String]] {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let file = "\(out)/scenario.yaml"
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        let outcome = try cli.memharness(["run", file, "--out", "\(out)/report", "--quiet"] + arguments)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let rows = CSVTable.parse(try String(contentsOfFile: "\(out)/report/summary.csv", encoding: .utf8))
        let header = try #require(rows.first)
        return rows.dropFirst().filter { $0.count == header.count }.map {
            Dictionary(uniqueKeysWithValues: zip(header, $0))
        }
    }

    func int(_ row: [String: String], _ column: String) throws -> Int {
        try #require(Int(row[column] ?? ""), "column \(column) in \(row)")
    }

    @Test func theCountingBinarySeesEveryEntryPointOfTheMallocFamily() throws {
        #expect(
            FileManager.default.fileExists(atPath: Self.agentLibrary),
            "\(Self.agentLibrary) is missing: `make test` builds it first (swift build --product memharness-agent)")
        let preload = try #require(AgentPreload.locate(besideExecutable: CommandLineTests.binary))
        let outcome = try cli.memharness(["_exact-check"], environment: preload.variables(exact: true))
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        let rows = outcome.stdout.split(separator: "\n").map { $0.components(separatedBy: " | ") }.filter {
            $0.count == 7
        }.dropFirst()
        let names = rows.map { $0[0] }
        for name in [
            "malloc", "calloc", "realloc(NULL)", "reallocarray(NULL)", "posix_memalign", "aligned_alloc", "memalign",
            "valloc", "pvalloc", "strdup (libc calls malloc)", "operator new", "operator new[]",
            "operator new(align 128)",
            "realloc (grow, moves)", "free on another thread", "peak of a freed block",
            "Swift Array (libswiftCore calls malloc)",
        ] {
            #expect(names.contains(name), "no row for \(name)")
        }
        for row in rows {
            // Every call moved the live count by exactly the block's usable size, both ways, and was counted.
            let expected = try #require(Int(row[1]))
            let counted = try #require(Int(row[2]))
            #expect(counted == expected, "\(row[0]): counted \(counted), usable \(expected)")
            #expect(expected != 0, "\(row[0]): the check itself must move the count")
            #expect(row[3] == row[4], "\(row[0]): released \(row[4]), expected \(row[3])")
            #expect((Int(row[5]) ?? 0) >= 1, "\(row[0]): the call was not counted")
        }
    }

    @Test func theDefaultBinaryStaysUninstrumented() throws {
        let outcome = try cli.memharness(["_exact-check"])
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("need every allocation counted"), "\(outcome.stderr)")
    }

    @Test func exactModeCatchesEverySpikeTheSamplerMisses() throws {
        let spikeSize = 16 << 20
        let spikes = 200
        let yaml = """
            scenario: spikes
            workload: calibration
            parameters:
              spikeSize: 16MiB
              spikeGap: 2ms
            strategies: [spikes]
            steps:
            \(String(repeating: "  - spike\n", count: spikes))repetitions: 1
            interval: 1ms
            """
        let row = try #require(try run(yaml, ["--peak", "exact"]).first)
        let truth = AllocatorCost.bytes(forRequest: spikeSize)
        #expect(
            try int(row, "metric.heldBytes_bytes") == truth,
            "the workload's spikes are the size-class bytes of spikeSize")
        let phases = ["spike"] + (2...spikes).map { "spike#\($0)" }
        var exactCaught = 0
        var sampledCaught = 0
        for phase in phases {
            let exact = try int(row, "phase.\(phase).exact_peak_net_bytes")
            let sampled = try int(row, "phase.\(phase).peak_allocated_net_bytes")
            #expect(abs(Double(exact - truth)) <= 0.005 * Double(truth), "\(phase): exact \(exact) vs truth \(truth)")
            if abs(Double(exact - truth)) <= 0.005 * Double(truth) { exactCaught += 1 }
            if Double(sampled) >= 0.995 * Double(truth) { sampledCaught += 1 }
        }
        #expect(exactCaught == spikes)
        // Each spike lives a few microseconds; a 1 ms sampler sees about 1 in 100.
        #expect(sampledCaught < spikes / 2, "the sampler caught \(sampledCaught) of \(spikes) spikes")
        let exactNet = try int(row, "exact_peak_net_bytes")
        #expect(abs(Double(exactNet - truth)) <= 0.005 * Double(truth))
        #expect(try int(row, "spike_excess_bytes") == exactNet - int(row, "peak_allocated_net_bytes"))
        #expect(try int(row, "exact_allocation_calls") >= spikes)
    }

    @Test func exactModeIsRightWhenBlocksAreFreedOnAnotherThread() throws {
        let objectSize = 4000
        let depth = 4096
        let yaml = """
            scenario: cross-thread
            workload: calibration
            parameters:
              objectSize: \(objectSize)B
              crossThreadDepth: \(depth)
              crossThreadItems: 200000
            strategies: [cross-thread]
            steps: [allocate, release]
            repetitions: 1
            peak: exact
            """
        let row = try #require(try run(yaml).first)
        // The full queue: `depth` blocks plus the queue's own slots (malloc'd, `depth` pointers).
        let truth = depth * AllocatorCost.bytes(forRequest: objectSize) + AllocatorCost.bytes(forRequest: depth * 8)
        #expect(try int(row, "metric.heldBytes_bytes") == truth)
        let exactNet = try int(row, "exact_peak_net_bytes")
        #expect(abs(Double(exactNet - truth)) <= 0.005 * Double(truth), "exact \(exactNet) vs truth \(truth)")
        #expect(try int(row, "exact_allocation_calls") >= 200_000)
    }

    @Test func withoutTheAgentAnExactRunStopsBeforeAnyCase() throws {
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lonely = "\(directory)/memharness"
        try FileManager.default.copyItem(atPath: CommandLineTests.binary, toPath: lonely)
        let outcome = try cli.memharness(
            [
                "run", CommandLineTests.fixtures.appendingPathComponent("calibration-with-crash.yaml").path,
                "--peak", "exact", "--out", "\(directory)/report",
            ], binary: lonely)
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("there is no libmemharness-agent.so beside \(lonely)"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("swift build --product memharness-agent"))
        #expect(!FileManager.default.fileExists(atPath: "\(directory)/report"))
    }
}
