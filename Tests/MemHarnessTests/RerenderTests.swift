import Foundation
import Testing

/// run.json is the record: every other file of a report folder is a rendering of it, and `memharness report`
/// brings each one back byte for byte from run.json alone.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct RerenderTests {
    let cli = CommandLineTests()

    @Test func deletedRenderingsComeBackByteIdenticalFromRunJSONAlone() throws {
        #expect(
            FileManager.default.fileExists(atPath: ExactPeakTests.agentLibrary),
            "\(ExactPeakTests.agentLibrary) is missing: `make test` builds it first (allocation stacks need it)")
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let out = "\(directory)/report"
        // A sweep (sweep.csv, a section per point) with allocation stacks (stacks/: folded and pprof profiles;
        // flame graphs among the charts), so every kind of rendering is in the folder.
        let run = try cli.memharness([
            "run", CommandLineTests.fixtures.appendingPathComponent("gate.yaml").path, "--out", out, "--quiet",
            "--attribute", "--set", "holdSize=2MiB,4MiB",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let before = try MeasurementFloorTests.contents(of: out)
        let rendered = before.keys.filter { $0 != "run.json" }.sorted()
        for expected in ["report.md", "report.html", "summary.csv", "samples.csv", "sweep.csv"] {
            #expect(rendered.contains(expected), "\(expected) missing from \(rendered)")
        }
        #expect(rendered.contains { $0.hasPrefix("charts/") && $0.hasSuffix("-flame.svg") }, "\(rendered)")
        #expect(rendered.contains { $0.hasPrefix("charts/") && $0.hasSuffix("-timeline.svg") }, "\(rendered)")
        #expect(rendered.contains { $0.hasPrefix("stacks/") && $0.hasSuffix(".pb.gz") }, "\(rendered)")
        #expect(rendered.contains { $0.hasPrefix("stacks/") && $0.hasSuffix(".folded") }, "\(rendered)")

        // Leave run.json only.
        for entry in try FileManager.default.contentsOfDirectory(atPath: out) where entry != "run.json" {
            try FileManager.default.removeItem(atPath: "\(out)/\(entry)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["run.json"])

        let report = try cli.memharness(["report", out])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout == "Report: \(out)/report.md\n")
        let after = try MeasurementFloorTests.contents(of: out)
        #expect(after.keys.sorted() == before.keys.sorted())
        for (path, data) in before { #expect(after[path] == data, "\(path) differs after `memharness report`") }
    }
}
