import AllocatorProbe
import FileIO
import Foundation
import HarnessModel
import Reports
import Testing
import WorkloadKit

/// The measurement floor end to end, on the built binaries: tiny known allocations of the calibration
/// workload read within the stated bounds, sampled and exact (`--peak exact` runs both in one case), and
/// the report states the uncertainty beside the figures. Truths come from jemalloc (`nallocx`) and from the
/// workload's own sum of `malloc_usable_size`, never from written-down numbers.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct MeasurementFloorTests {
    let exact = ExactPeakTests()

    /// The bound on a sampled net peak's distance from the truth of a tiny hold, bytes.
    static let sampledBoundBytes = 8 << 10
    /// The bound on an exact net peak's distance from the truth, bytes.
    static let exactBoundBytes = 1 << 10

    func yaml(_ strategy: String, parameters: String, steps: String, repetitions: Int) -> String {
        """
        scenario: floor
        workload: calibration
        parameters:
        \(parameters)
        strategies: [\(strategy)]
        steps: \(steps)
        repetitions: \(repetitions)
        interval: 1ms
        settle: 20ms
        peak: exact
        """
    }

    @Test func aOneKiBHoldReadsWithinItsFloorSampledAndExact() throws {
        let rows = try exact.run(
            yaml(
                "hold-large", parameters: "  holdSize: 1KiB", steps: "[allocate, {idle: 50ms}, release]", repetitions: 2
            ))
        #expect(rows.count == 2)
        let truth = AllocatorCost.bytes(forRequest: 1024)
        for row in rows {
            #expect(try exact.int(row, "metric.heldBytes_bytes") == truth)
            let sampled = try exact.int(row, "peak_allocated_net_bytes")
            let counted = try exact.int(row, "exact_peak_net_bytes")
            // Both probes see the block: a net peak below it (less the sampled peak's stated floor) would mean
            // they missed it.
            let floor = try exact.int(row, "peak_uncertainty_bytes")
            #expect(sampled >= truth - floor, "sampled \(sampled) B ± \(floor) B for a \(truth) B hold")
            #expect(counted >= truth, "exact \(counted) B for a \(truth) B hold")
            #expect(sampled - truth <= Self.sampledBoundBytes, "sampled \(sampled) B for a \(truth) B hold")
            #expect(counted - truth <= Self.exactBoundBytes, "exact \(counted) B for a \(truth) B hold")
            // Before the workload allocates anything, the harness has added nothing (the setup phase holds
            // only the workload's case object).
            let setup = try exact.int(row, "phase.setup.peak_allocated_net_bytes")
            #expect(setup <= 256, "the setup phase peaks \(setup) B above the baseline")
            #expect(try exact.int(row, "harness_allocated_bytes") == 0)
            #expect(try exact.int(row, "peak_uncertainty_bytes") >= 0)
            #expect(try exact.int(row, "exact_peak_uncertainty_bytes") == 0)
        }
    }

    @Test func theChurnLoopReadsWithinItsTrueLiveMaximum() throws {
        let rows = try exact.run(
            yaml(
                "churn", parameters: "  churnOperations: 300000\n  churnMaxSize: 4KiB",
                steps: "[allocate, release]", repetitions: 3))
        #expect(rows.count == 3)
        for row in rows {
            // The most that was alive at once: the workload's own sum of usable sizes, its ring of slots included.
            let truth = try exact.int(row, "metric.heldBytes_bytes")
            #expect(truth <= 64 * 4096 + 4096, "at most 64 blocks of 4 KiB and the ring")
            let counted = try exact.int(row, "exact_peak_net_bytes")
            let sampled = try exact.int(row, "peak_allocated_net_bytes")
            #expect(counted >= truth, "exact \(counted) B below the true live maximum \(truth) B")
            #expect(counted - truth <= Self.exactBoundBytes, "exact \(counted) B vs true live maximum \(truth) B")
            // The sampler sees the loop (its blocks average 2 KiB, 64 alive) and never more than was alive:
            // the freed blocks thread caches hold are not counted.
            #expect(sampled >= truth / 4, "sampled \(sampled) B: the sampler did not see the loop")
            #expect(sampled - truth <= Self.sampledBoundBytes, "sampled \(sampled) B vs true live maximum \(truth) B")
        }
    }

    @Test func theReportStatesTheFloorBesideThePeaks() throws {
        let directory = try exact.cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = "\(directory)/floor.yaml"
        try yaml("hold-large", parameters: "  holdSize: 1KiB", steps: "[allocate, release]", repetitions: 1)
            .write(toFile: file, atomically: true, encoding: .utf8)
        let out = "\(directory)/report"
        let outcome = try exact.cli.memharness(["run", file, "--out", out, "--quiet"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let report = try String(contentsOfFile: "\(out)/report.md", encoding: .utf8)
        let row = try #require(report.split(separator: "\n").first { $0.hasPrefix("| 1 | `hold-large` |") })
        let heading = try #require(report.split(separator: "\n").first { $0.hasPrefix("| Rank |") })
        let columns = heading.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        let peak = try #require(columns.firstIndex(of: "Peak allocated"))
        let exactPeak = try #require(columns.firstIndex(of: "Exact peak"))
        #expect(report.contains("± after a peak is its measurement floor"))
        let summary = CSVTable.parse(try String(contentsOfFile: "\(out)/summary.csv", encoding: .utf8))
        let header = try #require(summary.first)
        let values = try #require(summary.dropFirst().first)
        // Each peak carries its floor from summary.csv, or stands alone when the floor was 0 B.
        for (cell, column) in [
            (cells[peak], "peak_uncertainty_bytes"), (cells[exactPeak], "exact_peak_uncertainty_bytes"),
        ] {
            let index = try #require(header.firstIndex(of: column), "\(column) in summary.csv")
            let floor = try #require(Int(values[index]), "\(column) in summary.csv")
            if floor > 0 {
                #expect(
                    cell.hasSuffix(" ± \(Units.formatBytes(floor))"), "a peak without its floor of \(floor) B: \(row)")
            } else {
                #expect(!cell.contains("±"), "a floor of 0 B shown: \(row)")
            }
        }
        // The folder re-renders from its record byte for byte.
        let before = try Self.contents(of: out)
        let rerender = try exact.cli.memharness(["report", out])
        #expect(rerender.status == 0, "\(rerender.stderr)")
        #expect(try Self.contents(of: out) == before)
    }

    /// Every file of a folder (relative path → bytes).
    static func contents(of folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for path in try FileManager.default.subpathsOfDirectory(atPath: folder) {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: "\(folder)/\(path)", isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files[path] = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(path)"))
            }
        }
        return files
    }
}
