import Foundation
import HeapGraph
import Testing

/// The agent's one lifecycle under fire (`fork-stress`): three threads fork in a loop (their children end by _exit,
/// exit and exec in turn), a fourth signals them and their handlers allocate inside fork (with the agent's fork
/// handlers and their locks in the middle of it) and waitpid, heap captures run in a loop where the heap is tracked, an
/// atexit handler allocates, and the main thread calls exit() at a moment that differs from run to run. Every run must
/// end, with exit status 0 and its files whole, under each mode of the agent.
///
/// Each mode runs MEMHARNESS_STRESS_RUNS times (25 by default; `make test` runs the default, 100 measures the bar).
/// Run with MEMHARNESS_AGENT_LIBRARY naming an agent built from an older tree to count its hangs.
@Suite(.serialized, .timeLimit(.minutes(6)))
struct LifecycleStressTests {
    static let runs = ProcessInfo.processInfo.environment["MEMHARNESS_STRESS_RUNS"].flatMap { Int($0) } ?? 25

    enum Mode: String, CaseIterable, Sendable {
        case exact, stacks, heap, sampler
    }

    /// The mode's variables, its files in `folder` (`%p`: each process of the tree writes its own).
    static func variables(_ mode: Mode, folder: String) -> [String: String] {
        switch mode {
        case .exact:
            ["MEMHARNESS_AGENT_EXACT": "1", "MEMHARNESS_AGENT_RECORD": "\(folder)/record.%p"]
        case .stacks:
            // Dense sampling, and the heap tracked so captures run beside the forks (their locks meet).
            [
                "MEMHARNESS_AGENT_STACK_SAMPLE_BYTES": "4096", "MEMHARNESS_AGENT_HEAP": "1",
                "MEMHARNESS_AGENT_RECORD": "\(folder)/record.%p",
            ]
        case .heap:
            ["MEMHARNESS_AGENT_HEAP": "1", "MEMHARNESS_AGENT_HEAP_AT_EXIT": "\(folder)/heap.%p"]
        case .sampler:
            ["MEMHARNESS_AGENT_INTERVAL_NS": "1000000", "MEMHARNESS_AGENT_SAMPLES": "\(folder)/samples.%p"]
        }
    }

    /// One run: how it ended, and the program's counts (`forks`, `captures`, `signals`, `handler_allocations`).
    struct Run {
        var outcome: ProbeRunner.Outcome
        var pid: Int
        var counts: [String: Int]
    }

    func run(_ mode: Mode?, in probe: ProbeRunner) throws -> Run {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MEMHARNESS_AGENT_") }
        let jemalloc = ProbeRunner.jemallocPath ?? ""
        environment["LD_PRELOAD"] = mode == nil ? jemalloc : "\(ProbeRunner.agentPath) \(jemalloc)"
        if let mode { environment.merge(Self.variables(mode, folder: probe.directory.path)) { $1 } }
        let outcome = try probe.runTool(
            ProbeRunner.forkStressPath, ["100", probe.directory.path], environment: environment, timeout: .seconds(20))
        var counts: [String: Int] = [:]
        if let words = outcome.line("forks") {
            for index in stride(from: 0, to: words.count - 1, by: 2) { counts[words[index]] = Int(words[index + 1]) }
        }
        return Run(outcome: outcome, pid: outcome.value("pid", "pid") ?? 0, counts: counts)
    }

    /// The files the started process wrote at exit are whole: the record ends with `end`, the capture reads, the
    /// sample stream ends with its `x` line.
    func expectWholeFiles(_ mode: Mode, _ run: Run, in probe: ProbeRunner) throws {
        switch mode {
        case .exact, .stacks:
            let record = try AgentRecord(contentsOf: probe.path("record.\(run.pid)"))
            #expect(record.ended && record.exact != nil)
        case .heap:
            let capture = try CaptureFile(path: probe.path("heap.\(run.pid)"))
            #expect(capture.blockCount > 0)
        case .sampler:
            let stream = try SampleStream(contentsOf: probe.path("samples.\(run.pid)"))
            #expect(stream.exit?.status == 0 && stream.malformed.isEmpty)
        }
    }

    /// The program alone (jemalloc preloaded, no agent) never hangs: the signal handlers allocate only where no
    /// allocator could be interrupted, and only blocks jemalloc's thread cache serves without a lock (fork-stress fills
    /// it before each fork and turns its collection off), so a hang under the agent is the agent's.
    @Test func theProgramAloneEndsEveryTime() throws {
        try #require(ProbeRunner.missingPieces == nil, "\(ProbeRunner.missingPieces ?? "")")
        try #require(FileManager.default.isExecutableFile(atPath: ProbeRunner.forkStressPath), "build fork-stress")
        var failed: [String] = []
        for _ in 0..<10 {
            let probe = try ProbeRunner()
            defer { probe.cleanUp() }
            let run = try run(nil, in: probe)
            if run.outcome.timedOut || run.outcome.status != 0 { failed.append("status \(run.outcome.status)") }
            #expect((run.counts["forks"] ?? 0) > 0, "\(run.outcome.stdout)")
        }
        #expect(failed.isEmpty, "\(failed)")
    }

    @Test(arguments: Mode.allCases)
    func forksSignalsCapturesAndExitAllEndUnderEveryMode(mode: Mode) throws {
        try #require(ProbeRunner.missingPieces == nil, "\(ProbeRunner.missingPieces ?? "")")
        try #require(FileManager.default.isExecutableFile(atPath: ProbeRunner.forkStressPath), "build fork-stress")
        var hangs = 0
        var failures: [String] = []
        var totals: [String: Int] = [:]
        for _ in 0..<Self.runs {
            let probe = try ProbeRunner()
            defer { probe.cleanUp() }
            let run = try run(mode, in: probe)
            totals.merge(run.counts) { $0 + $1 }
            if run.outcome.timedOut {
                hangs += 1
            } else if run.outcome.status != 0 {
                failures.append("status \(run.outcome.status): \(run.outcome.stderr.suffix(300))")
            } else {
                try expectWholeFiles(mode, run, in: probe)
            }
        }
        #expect(hangs == 0, "\(mode): \(hangs) of \(Self.runs) runs hung")
        #expect(failures.isEmpty, "\(mode): \(failures.count) of \(Self.runs) runs failed: \(failures.prefix(3))")
        // What was exercised, so a run that forked or signalled nothing cannot pass for one that survived it.
        #expect((totals["forks"] ?? 0) >= Self.runs && (totals["handler_allocations"] ?? 0) > 0, "\(totals)")
        if mode == .stacks || mode == .heap { #expect((totals["captures"] ?? 0) > 0, "\(totals)") }
    }

    /// The reproduction `profile` hung on (threads forking in a loop while the main thread calls exit(): 4 hangs in 10
    /// runs, the exit handler and the sampler waiting for a lock a fork's prepare handler took), through the built
    /// `memharness profile` in its default mode, 20 times: every run ends with the program's exit status 0.
    @Test func profileOfThreadsForkingWhileMainExitsNeverHangs() throws {
        try #require(ProbeRunner.missingPieces == nil, "\(ProbeRunner.missingPieces ?? "")")
        let memharness = ProbeRunner.buildDirectory.appendingPathComponent("memharness").path
        try #require(FileManager.default.isExecutableFile(atPath: memharness), "build memharness")
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MEMHARNESS_AGENT_") }
        environment["MEMHARNESS_AGENT_LIBRARY"] = ProbeRunner.agentPath
        var ended: [String] = []
        for _ in 0..<20 {
            let probe = try ProbeRunner()
            defer { probe.cleanUp() }
            let outcome = try probe.runTool(
                memharness,
                [
                    "profile", "--quiet", "--timeout", "10s", "--out", probe.path("report"), "--",
                    ProbeRunner.forkStressPath, "50", probe.directory.path,
                ], environment: environment, timeout: .seconds(60))
            ended.append(outcome.timedOut ? "harness hung" : "exit \(outcome.status)")
            #expect(!outcome.stderr.contains("timed-out"), "\(outcome.stderr.suffix(300))")
        }
        #expect(ended.allSatisfy { $0 == "exit 0" }, "\(ended)")
    }
}
