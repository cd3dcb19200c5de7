import Foundation
import HarnessModel
import TestSupport
import Testing

/// `memharness history` on a real sequence of commits: a temporary git repository of eight commits of a tiny C
/// program run as a command scenario, where the fifth commit doubles what it keeps. Every commit is built, run
/// with the built `memharness`, recorded; `history show` must name the fifth commit and `git bisect run` with
/// `history bisect` must find it.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct HistoryEndToEndTests {
    static let program = """
        #include <stdlib.h>
        #include <string.h>
        #include <unistd.h>
        #define KEEP (KIB * 1024)
        int main(void) {
            char *kept = malloc(KEEP);
            memset(kept, 1, KEEP);  /* VERSION */
            usleep(200000);
            free(kept);
            return 0;
        }
        """

    static let scenario = """
        scenario: keeper
        description: A program that keeps a buffer for 200 ms.
        workload: command
        strategies:
          - name: keeper
            command: ./keeper
        repetitions: 1
        peak: exact
        settle: 10ms
        """

    let trial: ProgramTrial
    var repository: String { "\(trial.folder)/repo" }

    init() throws { trial = try ProgramTrial() }

    /// A command in the repository; a failure fails the test with its output.
    @discardableResult
    func shell(_ command: String, environment: [String: String] = [:]) throws -> ChildRun {
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { $1 }
        let run = try ChildRun.run(
            "/bin/sh", ["-c", command], environment: variables, timeout: .seconds(120), directory: repository)
        #expect(run.status == 0, "\(command): \(run.stdout) \(run.stderr)")
        return run
    }

    /// Commit `number` (1-8) of the program: 1 MiB kept until the fifth, 2 MiB from it on.
    func commit(_ number: Int) throws -> String {
        let source = Self.program.replacingOccurrences(of: "KIB", with: number >= 5 ? "2048" : "1024")
            .replacingOccurrences(of: "VERSION", with: "version \(number)")
        try source.write(toFile: "\(repository)/keeper.c", atomically: true, encoding: .utf8)
        let date = "2026-01-0\(number)T00:00:00Z"
        try shell(
            "git add keeper.c keeper.yaml && git commit -q -m 'version \(number)'",
            environment: ["GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date])
        return try shell("git rev-parse HEAD").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func showNamesTheCommitThatDoubledWhatIsKeptAndBisectFindsIt() throws {
        defer { trial.remove() }
        try FileManager.default.createDirectory(atPath: repository, withIntermediateDirectories: true)
        try Self.scenario.write(toFile: "\(repository)/keeper.yaml", atomically: true, encoding: .utf8)
        try shell("git init -q && git config user.name test && git config user.email test@example.com")
        var commits: [String] = []
        for number in 1...8 {
            commits.append(try commit(number))
            try shell("cc -O0 -o keeper keeper.c")
            let run = try memharness(["run", "keeper.yaml", "--out", "../report", "--quiet"])
            #expect(run.status == 0, "\(run.stderr)")
            let record = try memharness(["history", "record", "../report", "--store", "../store"])
            #expect(record.status == 0 && record.stdout.contains(String(commits[number - 1].prefix(10))), "\(record)")
            if number == 5 {
                // The newest run starts the step: the gate fails on it, naming the figure and the runs before.
                let gate = try memharness(["history", "gate", "--store", "../store"])
                #expect(gate.status == 2, "\(gate)")
                #expect(gate.stdout.contains("FAIL  keeper / keeper / exactPeak: +100.0%"), "\(gate.stdout)")
                #expect(gate.stdout.contains("against 4 earlier runs"), "\(gate.stdout)")
            }
        }
        let show = try memharness(["history", "show", "--store", "../store", "--out", "../history"])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("keeper / keeper / exactPeak: stepped +100.0% at \(commits[4])"), "\(show.stdout)")
        let markdown = try String(contentsOfFile: "\(trial.folder)/history/history.md", encoding: .utf8)
        #expect(markdown.contains("`\(commits[4].prefix(10))`"))
        // Only the fifth commit changed anything, so history.md names no other: RSS moves in pages, jemalloc's
        // resident bytes are 2 MiB higher in some runs, and none of that is a step. The newest run alone beyond
        // everything before it is the gate's to judge, in a section of its own, not a change point. The sampled
        // figures see the buffer only if a sample lands while it is kept: 200 ms, so that a sampler a loaded
        // machine starves still sees it (kept 20 ms, the fifth run's sampled peak was missed once at a load of 10
        // on 2 cores, and peakAllocated rightly rose a run late, at the sixth commit).
        let sections = markdown.components(separatedBy: "\n## ").filter { !$0.hasPrefix("The newest run\n") }
        let changes = sections.joined(separator: "\n## ")
        for (index, commit) in commits.enumerated() where index != 4 {
            #expect(!changes.contains("`\(commit.prefix(10))`"), "commit \(index + 1) named:\n\(markdown)")
        }
        #expect(try memharness(["history", "gate", "--store", "../store"]).status == 0)
        let diff = try memharness(["history", "diff", String(commits[3].prefix(8)), commits[4], "--store", "../store"])
        #expect(
            diff.status == 0 && diff.stdout.contains("| keeper | `keeper` | exactPeak | 1.00 MiB | 2.00 MiB | +100.0%"))
        try shell("git bisect start \(commits[7]) \(commits[0])")
        let bisect = try shell(
            "git bisect run '\(CommandLineTests.binary)' history bisect --scenario keeper.yaml --strategy keeper "
                + "--figure exactPeak --limit 1536KiB --build 'cc -O0 -o keeper keeper.c' --out ../bisect")
        #expect(bisect.stdout.contains("\(commits[4]) is the first bad commit"), "\(bisect.stdout)")
    }

    @Test func badInputExitsWith64NamingTheFileAndWritesNothing() throws {
        defer { trial.remove() }
        try FileManager.default.createDirectory(atPath: "\(repository)/not-a-run", withIntermediateDirectories: true)
        let notARun = try memharness(["history", "record", "not-a-run", "--store", "store"])
        #expect(notARun.status == 64 && notARun.stderr.contains("not-a-run/run.json"), "\(notARun)")
        #expect(!FileManager.default.fileExists(atPath: "\(repository)/store"))
        try FileManager.default.createDirectory(
            atPath: "\(repository)/store/records", withIntermediateDirectories: true)
        try "{\"format\": \"memharness-history/1\"}".write(
            toFile: "\(repository)/store/store.json", atomically: true, encoding: .utf8)
        try "{\"schema\": \"memharness-history-record/1\", \"figu".write(
            toFile: "\(repository)/store/records/0123.json", atomically: true, encoding: .utf8)
        let damaged = try memharness(["history", "show", "--store", "store", "--out", "history"])
        #expect(damaged.status == 64 && damaged.stderr.contains("store/records/0123.json"), "\(damaged)")
        #expect(!FileManager.default.fileExists(atPath: "\(repository)/history"))
        try "{\"format\": \"memharness-history/9\"}".write(
            toFile: "\(repository)/store/store.json", atomically: true, encoding: .utf8)
        let otherVersion = try memharness(["history", "gate", "--store", "store"])
        #expect(otherVersion.status == 64 && otherVersion.stderr.contains("store/store.json"), "\(otherVersion)")
        let unknownOption = try memharness(["history", "show", "--sotre", "store"])
        #expect(unknownOption.status == 64, "\(unknownOption)")
        let notAStore = try memharness(["history", "show", "--store", "not-a-run"])
        #expect(notAStore.status == 64 && notAStore.stderr.contains("not-a-run"), "\(notAStore)")
    }

    /// `history bisect` checks `--repeat` against the limits `run` checks: the same message and exit 64, before its
    /// build command runs or a report folder is written (it used to pass its own check, be refused by the planner
    /// and report every commit as one to skip).
    @Test func bisectRefusesWhatRunRefusesBeforeBuilding() throws {
        defer { trial.remove() }
        try FileManager.default.createDirectory(atPath: repository, withIntermediateDirectories: true)
        try Self.scenario.write(toFile: "\(repository)/keeper.yaml", atomically: true, encoding: .utf8)
        for value in ["500", "0", "-1"] {
            let run = try memharness(["run", "keeper.yaml", "--repeat", value, "--out", "../report"])
            let bisect = try memharness([
                "history", "bisect", "--scenario", "keeper.yaml", "--strategy", "keeper", "--limit", "1MiB",
                "--repeat", value, "--build", "touch built", "--out", "../bisect",
            ])
            let refusal = try #require(run.stderr.split(separator: "\n").first, "\(run)")
            #expect(run.status == 64 && refusal.hasPrefix("Error: --repeat \(value) is "), "\(run)")
            #expect(bisect.status == 64, "\(bisect)")
            #expect(bisect.stderr.split(separator: "\n").first == refusal, "\(bisect.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(repository)/built"), "a refused bisect ran its build")
        let accepted = try memharness([
            "history", "bisect", "--scenario", "keeper.yaml", "--strategy", "keeper", "--limit", "1MiB",
            "--repeat", "100", "--build", "touch built && false", "--out", "../bisect",
        ])
        // The build ran (and failed, so the commit is skipped): the same options but in range pass the check.
        #expect(accepted.status == 125 && FileManager.default.fileExists(atPath: "\(repository)/built"), "\(accepted)")
        try FileManager.default.removeItem(atPath: "\(repository)/built")
        let contents = try FileManager.default.contentsOfDirectory(atPath: trial.folder).sorted()
        #expect(contents == ["repo"], "\(contents)")
    }

    /// The built `memharness` in the repository, the agent beside it.
    func memharness(_ arguments: [String]) throws -> ChildRun {
        var environment = ProcessInfo.processInfo.environment
        environment["GITHUB_ACTIONS"] = nil
        environment["GITHUB_SHA"] = nil
        environment["GITHUB_REF_NAME"] = nil
        environment["GITHUB_HEAD_REF"] = nil
        return try ChildRun.run(
            CommandLineTests.binary, arguments, environment: environment, timeout: .seconds(120),
            directory: repository)
    }
}
