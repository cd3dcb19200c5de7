import FileIO
import Foundation
import HarnessModel
import Reports
import TestSupport
import Testing

#if os(Linux)
    import Glibc
#endif

/// Runs the built `memharness` on external programs (`profile`, `workload: command` scenarios) in a folder of
/// its own, and reads what it wrote. `make test` builds `agent-probe` and the agent beside the test bundle.
struct ProgramTrial {
    let cli = CommandLineTests()
    /// The trial's folder: scripts and scenarios are written here, the report goes to `out`.
    let folder: String
    var out: String { "\(folder)/report" }

    static let agentProbe = CommandLineTests.binary(named: "agent-probe")
    static let agentLibrary = CommandLineTests.binary(named: "libmemharness-agent.so")

    init() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.agentProbe),
            "\(Self.agentProbe) is missing: `make test` builds it (swift build --product agent-probe)")
        try #require(
            FileManager.default.fileExists(atPath: Self.agentLibrary),
            "\(Self.agentLibrary) is missing: `make test` builds it (swift build --product memharness-agent)")
        folder = try cli.temporaryDirectory()
    }

    func remove() { try? FileManager.default.removeItem(atPath: folder) }

    /// `memharness ARGUMENTS`, run in the trial's folder (relative paths in scenarios are taken from the
    /// directory memharness runs in) with the build folder first in PATH, so scenarios can name `agent-probe`
    /// as a user names a tool they installed. A run still going after 120 s is killed and fails the test.
    /// `binary` is `memharness` unless another harness executable is given.
    func memharness(
        _ arguments: [String], environment: [String: String] = [:], binary: String = CommandLineTests.binary
    ) throws -> CommandLineTests.Outcome {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let buildFolder = URL(fileURLWithPath: Self.agentProbe).deletingLastPathComponent().path
        var childEnvironment = ProcessInfo.processInfo.environment
        // A test run inside GitHub Actions must not leak its own settings into the binary under test.
        childEnvironment["GITHUB_ACTIONS"] = nil
        childEnvironment["GITHUB_STEP_SUMMARY"] = nil
        childEnvironment["PATH"] = "\(buildFolder):\(path)"
        childEnvironment.merge(environment) { $1 }
        let run = try ChildRun.run(
            binary, arguments, environment: childEnvironment, timeout: .seconds(120), directory: folder)
        #expect(!run.timedOut, "\(binary) \(arguments) did not finish within 120 s")
        return run
    }

    /// `memharness profile --out <out> OPTIONS -- COMMAND`.
    func profile(_ options: [String] = [], _ command: [String]) throws -> CommandLineTests.Outcome {
        try memharness(["profile", "--out", out] + options + ["--"] + command)
    }

    /// Writes an executable file (a script) named `name` into the folder; returns its path.
    @discardableResult
    func script(_ name: String, _ text: String, mode: mode_t = 0o755) throws -> String {
        let path = "\(folder)/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    /// summary.csv's rows, each keyed by column.
    /// The rows of summary.csv (measured cases), or of instrumented.csv.
    func rows(_ file: String = "summary.csv") throws -> [[String: String]] {
        let rows = CSVTable.parse(try String(contentsOfFile: "\(out)/\(file)", encoding: .utf8))
        let header = try #require(rows.first)
        return rows.dropFirst().filter { $0.count == header.count }.map {
            Dictionary(uniqueKeysWithValues: zip(header, $0))
        }
    }

    /// The one row of a profile.
    func onlyRow() throws -> [String: String] {
        let rows = try rows()
        try #require(rows.count == 1, "\(rows)")
        return rows[0]
    }

    /// The run's record (run.json).
    func record() throws -> RunRecord { try ReportFolder.read(out) }

    /// The least a program's net peak may read while it holds `truthBytes`, bytes.
    ///
    /// A program's figures state no floor. Its net peak is above the first sample (the agent's load, before
    /// `main`), and the program may free blocks of that baseline before it holds the truth, never more than
    /// the baseline itself: the net peak is at least the truth less the baseline.
    static func leastPeakNetBytes(holding truthBytes: Int, _ row: [String: String]) throws -> Int {
        truthBytes - (try bytes(row, "baseline_allocated_bytes"))
    }

    /// A byte column of `row` as an integer.
    static func bytes(_ row: [String: String], _ column: String) throws -> Int {
        try #require(Int(row[column] ?? ""), "column \(column) of \(row)")
    }
}
