import FileIO
import Foundation
import HarnessModel
import Reports
import Testing

/// Memory limits end to end: the child stops itself, the parent records it, the CLI reports it.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct MemoryBudgetCommandLineTests {
    let cli = CommandLineTests()
    static let fixture = CommandLineTests.fixtures.appendingPathComponent("runaway-under-limit.yaml").path

    @Test func aRunawayCaseIsKilledAtTheLimitRecordedAndTheOthersRun() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let outcome = try cli.memharness(["run", Self.fixture, "--out", out])
        #expect(outcome.status == 0, "a kill is a result, like a peak: \(outcome.stderr)")
        #expect(outcome.stderr.contains("memory limit: runaway / hold-small-objects #1: killed by memory limit at "))
        #expect(!outcome.stderr.contains("error:"))

        let rows = CSVTable.parse(try String(contentsOfFile: "\(out)/summary.csv", encoding: .utf8))
        let header = try #require(rows.first)
        func column(_ name: String) throws -> Int { try #require(header.firstIndex(of: name)) }
        let byStrategy = Dictionary(uniqueKeysWithValues: rows.dropFirst().map { ($0[try! column("strategy")], $0) })
        let killed = try #require(byStrategy["hold-small-objects"])
        #expect(killed[try column("status")] == "killed-by-memory-limit")
        #expect(killed[try column("failure")].hasPrefix("killed by memory limit at "))
        #expect(killed[try column("failure")].contains("allocated (limit 64.00 MiB), after 1 memory warning"))
        let footprint = try #require(Double(killed[try column("footprint_at_kill_bytes")]))
        #expect(footprint > Double(64 << 20))
        #expect(
            try #require(Int(killed[try column("peak_allocated_bytes")])) < 256 << 20,
            "stopped long before the workload's 256 MiB")
        #expect(byStrategy["churn"]?[try column("status")] == "ok")

        let report = try String(contentsOfFile: "\(out)/report.md", encoding: .utf8)
        #expect(report.contains("| – | `hold-small-objects` | killed by memory limit at "))
        #expect(report.contains("**Reading:** Killed by the memory limit: `hold-small-objects` (1/1 cases, at "))
        #expect(report.contains("`memoryBudget` = limit 64.00 MiB, warning at 32.00 MiB (allocated)"))
        let samples = CSVTable.parse(try String(contentsOfFile: "\(out)/samples.csv", encoding: .utf8))
        #expect(samples.first?.last == "gauge.memoryWarnings")
        #expect(
            samples.contains { $0.count > 2 && $0[1] == "hold-small-objects" }, "the killed case's samples are kept")
    }

    @Test func failOnMemoryLimitMakesAKillAFinding() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let outcome = try cli.memharness(["run", Self.fixture, "--out", out, "--fail-on-memory-limit"])
        #expect(outcome.status == 2, "\(outcome.stderr)")
        #expect(FileManager.default.fileExists(atPath: "\(out)/report.md"))
    }

    @Test func theCommandLineOverridesTheFilesLimit() throws {
        let out = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let outcome = try cli.memharness([
            "run", Self.fixture, "--out", out, "--memory-limit", "1GiB", "--memory-warning", "none",
        ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let report = try String(contentsOfFile: "\(out)/report.md", encoding: .utf8)
        #expect(report.contains("`memoryBudget` = limit 1.00 GiB (allocated)"))
    }

    @Test(arguments: [
        (["--memory-limit", "12XB"], "--memory-limit '12XB': expected a size of at least 1MiB"),
        (["--memory-warning", "150%"], "--memory-warning '150%': expected a share of the limit"),
        (["--device", "nokia-3310"], "--device 'nokia-3310': unknown device; expected one of: iphone-4s, "),
        (["--footprint", "virtual"], "--footprint"),
        (["--memory-limit", "none"], "the memory warning is 50% of the limit, but there is no memory limit"),
        (["--interval", "0ms"], "a memory limit or warning needs the sampler"),
    ])
    func badBudgetsExit64BeforeAnyWork(arguments: [String], message: String) throws {
        let outcome = try cli.memharness(["run", Self.fixture, "--out", CommandLineTests.neverWritten] + arguments)
        #expect(outcome.status == 64, "\(arguments): \(outcome.stderr)")
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: CommandLineTests.neverWritten))
    }
}
