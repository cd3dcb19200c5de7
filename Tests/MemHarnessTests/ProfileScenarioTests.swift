import AllocatorProbe
import FileIO
import Foundation
import HarnessModel
import Reports
import Testing
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// Scenarios whose strategies are external programs (`workload: command`), end to end on the built binaries:
/// ranked side by side with the scenario's parameters in their command lines, gated by thresholds, and
/// refused with the place of the mistake before anything runs.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ProfileScenarioTests {
    static let mebibyte = 1 << 20
    static let ranking = CommandLineTests.fixtures.appendingPathComponent("command-ranking.yaml").path

    @Test func twoProgramsAreRankedSideBySideWithTheirParametersAndGated() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.memharness(["run", Self.ranking, "--out", trial.out, "--set", "hold=20MiB"])
        #expect(outcome.status == 0, "every check passes: \(outcome.stderr)")
        #expect(
            outcome.stdout.contains("✅ PASS  command-ranking  one-block.peakAllocated <= 25MiB"), "\(outcome.stdout)")

        // The truths: one block of {hold}; 64 blocks of 1 MiB.
        let truths = [
            "one-block": AllocatorCost.bytes(forRequest: 20 * Self.mebibyte),
            "two-sites": 64 * AllocatorCost.bytes(forRequest: Self.mebibyte),
        ]
        let rows = try trial.rows()
        #expect(rows.count == 4, "two strategies, two repetitions each")
        for row in rows {
            let strategy = try #require(row["strategy"])
            let truth = try #require(truths[strategy], "unexpected strategy \(strategy)")
            let peak = try ProgramTrial.bytes(row, "peak_allocated_net_bytes")
            #expect(row["status"] == "ok")
            #expect(row["exit_status"] == "0")
            #expect(
                peak >= (try ProgramTrial.leastPeakNetBytes(holding: truth, row)) && peak <= truth + truth / 50,
                "\(strategy): peak \(peak) vs truth \(truth)")
        }
        // The parameters went into the command lines, whether written as one string or as a list of words.
        let cases = try trial.record().report.scenarios.flatMap(\.cases)
        let commandLines = Set(cases.compactMap { $0.measurements?.program?.commandLine })
        #expect(commandLines.count == 2)
        #expect(commandLines.contains { $0.hasSuffix("/agent-probe hold 20MiB 150") }, "\(commandLines)")
        #expect(commandLines.contains { $0.hasSuffix("/agent-probe two-sites 150") }, "\(commandLines)")
        let report = try String(contentsOfFile: "\(trial.out)/report.md", encoding: .utf8)
        #expect(report.contains("| 1 | `one-block` |"), "the smaller peak ranks first")
        #expect(report.contains("| 2 | `two-sites` |"))
    }

    @Test func aProgramOverItsThresholdFailsTheGate() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.memharness(["run", Self.ranking, "--out", trial.out, "--set", "hold=40MiB"])
        #expect(outcome.status == 2, "a broken threshold exits 2: \(outcome.stderr)")
        #expect(outcome.stdout.contains("FAIL: one-block.peakAllocated = 40.0"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("breaks `one-block.peakAllocated <= 25MiB`"), "\(outcome.stdout)")
        let rows = try trial.rows().filter { $0["strategy"] == "one-block" }
        let peaks = try rows.map { try ProgramTrial.bytes($0, "peak_allocated_net_bytes") }
        let least = try rows.map { try ProgramTrial.leastPeakNetBytes(holding: 40 * Self.mebibyte, $0) }
        #expect(peaks.count == 2 && zip(peaks, least).allSatisfy { $0 >= $1 }, "\(peaks), at least \(least)")
    }

    @Test func aRelativeProgramRunsInItsStrategysDirectory() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        try FileManager.default.createDirectory(atPath: "\(trial.folder)/bin", withIntermediateDirectories: false)
        // The program is found in `directory` and starts there: it reads a file it names relatively.
        try trial.script("bin/holder.sh", "#!/bin/sh\ntest -f ./marker || exit 9\nexec agent-probe hold 4MiB 50\n")
        try "".write(toFile: "\(trial.folder)/bin/marker", atomically: true, encoding: .utf8)
        let scenario = try trial.script(
            "relative.yaml",
            """
            scenario: relative
            workload: command
            strategies:
              - name: holder
                command: ./holder.sh
                directory: bin
            repetitions: 1

            """, mode: 0o644)
        let outcome = try trial.memharness(["run", scenario, "--out", trial.out])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let row = try trial.onlyRow()
        #expect(row["exit_status"] == "0", "\(row)")
        #expect(
            try ProgramTrial.bytes(row, "peak_allocated_net_bytes")
                >= ProgramTrial.leastPeakNetBytes(holding: 4 * Self.mebibyte, row))
    }

    @Test func badCommandsAreRefusedWithTheirPlaceBeforeAnyRun() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        try trial.script("plain.sh", "#!/bin/sh\n", mode: 0o644)
        try trial.script("noshebang", "echo never\n")
        try FileManager.default.createDirectory(atPath: "\(trial.folder)/folder", withIntermediateDirectories: false)
        try Data(ProfileCommandTests.staticELFHeader).write(to: URL(fileURLWithPath: "\(trial.folder)/static"))
        chmod("\(trial.folder)/static", 0o755)
        let file = try trial.script(
            "bad.yaml",
            """
            scenario: bad-commands
            workload: command
            parameters: {size: 16MiB}
            strategies:
              - name: missing
                command: ./missing {size}
              - name: not-executable
                command: ./plain.sh
              - name: no-shebang
                command: ./noshebang
              - name: directory
                command: [./folder]
              - name: static
                command: ./static
              - name: typo
                command: agent-probe hold {sise} 10
              - name: no-command

            """, mode: 0o644)
        let outcome = try trial.memharness(["run", file, "--out", trial.out])
        #expect(outcome.status == 64)
        let folder = trial.folder
        for message in [
            "\(file):6:14: ./missing: no such file (\(folder)/missing)",
            "\(file):8:14: ./plain.sh: not executable (chmod +x \(folder)/plain.sh)",
            "\(file):10:14: ./noshebang: not an executable: neither a binary for this machine nor a script starting "
                + "with #! (a script needs a first line such as #!/bin/sh)",
            "\(file):12:14: ./folder: is a directory; expected an executable program",
            "\(file):14:14: ./static: statically linked",
            "\(file):16:14: unknown parameter '{sise}' in the command; the scenario's parameters: size "
                + "(did you mean 'size'?)",
            "\(file):17:11: a strategy of a command scenario needs 'command'",
        ] {
            #expect(outcome.stderr.contains("error: \(message)"), "\(message)\n\(outcome.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: trial.out), "nothing ran, nothing was written")
    }
}
