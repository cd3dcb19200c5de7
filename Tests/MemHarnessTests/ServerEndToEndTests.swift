import Foundation
import HarnessModel
import TestSupport
import Testing
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// Server strategies end to end on the built binaries: `http-fixture` (whose requests, retained bytes and crash are
/// known by construction) started under the agent, made ready by its port or its line, loaded by `memharness-load`,
/// and stopped; never ready, crashing under load, or deaf to SIGTERM. After every run the port is free and no
/// process is left.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ServerEndToEndTests {
    static let fixture = CommandLineTests.binary(named: "http-fixture")
    static let loadClient = CommandLineTests.binary(named: "memharness-load")

    /// Fails the test unless the fixture and the load client are built.
    static func requireBuilt() throws {
        try #require(FileManager.default.isExecutableFile(atPath: fixture), "`swift build --product http-fixture`")
        try #require(
            FileManager.default.isExecutableFile(atPath: loadClient), "`swift build --product memharness-load`")
    }

    /// The processes whose command line holds `word` (the fixture started with a port of this test).
    static func processes(holding word: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.filter { Int($0) != nil }.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return words.contains { $0.hasSuffix("http-fixture") } && words.contains(word)
                ? "\(pid): \(words.joined(separator: " "))" : nil
        }
    }

    /// A one-repetition scenario sampled every 5 ms whose one strategy, `fixture`, serves the fixture with `arguments` at
    /// `port`, `strategy` its server keys (`{port}` the port), then `more` (top-level keys: thresholds).
    static func scenario(port: Int, _ arguments: String, _ strategy: String, more: String = "") -> String {
        let keys = strategy.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
        return """
            scenario: server
            workload: command
            repetitions: 1
            interval: 5ms
            parameters:
              port: "\(port)"
            strategies:
              - name: fixture
                command: \(Self.fixture) {port} \(arguments)
            \(keys)
            \(more)

            """
    }

    /// Runs `strategy` (a server strategy's keys, `{port}` its port) of a one-repetition scenario on the fixture
    /// with `arguments`; checks that nothing is left and the port is free; returns the trial and the one case.
    func serve(_ arguments: String, _ strategy: String) throws -> (ProgramTrial, CaseResult, Int) {
        try Self.requireBuilt()
        let trial = try ProgramTrial()
        let port = try #require(LocalPorts.free())
        let scenario = try trial.script("server.yaml", Self.scenario(port: port, arguments, strategy))
        _ = try trial.memharness(["run", scenario, "--out", trial.out])
        #expect(Self.processes(holding: "\(port)").isEmpty, "nothing outlives the run")
        #expect(LocalPorts.canListen(on: port), "the port \(port) is free again")
        let cases = try trial.record().report.scenarios.flatMap(\.cases)
        try #require(cases.count == 1, "\(cases)")
        return (trial, cases[0], port)
    }

    @Test func aServerReadyByItsPortIsLoadedPhaseByPhaseAndStopped() throws {
        let retained = 4096
        let (trial, result, _) = try serve(
            "--retain \(retained)",
            """
            ready: {port: "{port}", timeout: 10s}
            steps:
              - load: {path: /echo, connections: 4, requests: 2000}
              - wait: 200ms
              - command: /bin/sh -c true
            stop: {signal: TERM, grace: 5s}
            """)
        defer { trial.remove() }
        #expect(result.status == .ok, "\(result.failureText ?? "")")
        let measurements = try #require(result.measurements)
        // The load client's count is the server's own (it prints what it answered at its stop).
        #expect(measurements.metric("requests")?.value == 2000)
        #expect(measurements.metric("requestErrors")?.value == 0)
        let p50 = try #require(measurements.metric("latencyP50")?.value)
        let p99 = try #require(measurements.metric("latencyP99")?.value)
        #expect(p50 > 0 && p50 <= p99, "p50 \(p50) ms, p99 \(p99) ms")
        #expect(measurements.program?.stderrTail.contains("served 2000") == true, "\(measurements.program as Any)")
        // Each step is a phase with its own peak; the load phase holds what 2,000 requests retained by construction.
        #expect(measurements.phases.map(\.name) == ["start", "load", "wait", "command", "stop"])
        let byName = Dictionary(uniqueKeysWithValues: measurements.phases.map { ($0.name, $0) })
        let start = try #require(byName["start"]).peakAllocatedBytes
        let load = try #require(byName["load"]).peakAllocatedBytes
        let truth = 2000 * AllocatorCost.bytes(forRequest: retained)
        #expect(load - start >= truth * 9 / 10, "load phase peak \(load) vs start \(start), retained \(truth)")
        #expect(load - start <= truth + truth / 5, "load phase peak \(load) vs start \(start), retained \(truth)")
        let rows = try trial.rows()
        #expect(rows.first?["metric.requests"] == "2000", "\(rows)")
    }

    @Test func aServerUnderLoadHasItsResidentSetExplainedAtItsPeakAndAtItsEnd() throws {
        let retained = 4096
        let (trial, result, _) = try serve(
            "--retain \(retained)",
            """
            ready: {port: "{port}", timeout: 10s}
            steps:
              - load: {path: /echo, connections: 4, requests: 4000}
            """)
        defer { trial.remove() }
        #expect(result.status == .ok, "\(result.failureText ?? "")")
        let parts = try #require(result.measurements?.program?.residentExplained, "\(result)")
        let truth = 4000 * AllocatorCost.bytes(forRequest: retained)
        for breakdown in parts {
            // The probe sees what the server keeps by construction: all of it at the end; at the peak, all but what
            // the last 3% of the resident set's growth holds, since the agent explains a new high only once the set
            // is 3% above the last one explained (`MH_EXPLAIN_STEP`): the set may stop growing while the last
            // requests' blocks still land in pages already resident (a fresh clone's run read 16,262,816 B of
            // 16,384,000 at the peak).
            let slack = breakdown.point == .peak ? breakdown.measuredBytes * 3 / 100 : 0
            #expect(breakdown.liveHeapBytes + slack >= truth, "\(breakdown)")
            #expect((breakdown.allocatorPagesBytes ?? 0) + slack >= truth, "\(breakdown)")
            #expect(
                abs(breakdown.unexplainedFraction) <= 0.02,
                "unexplained \(breakdown.unexplainedBytes) of \(breakdown.measuredBytes): \(breakdown)")
        }
        #expect(Set(parts.map(\.point)) == [.peak, .end], "\(parts)")
        #expect(result.metric("rssLiveHeap") != nil && result.metric("rssUnexplainedAtEnd") != nil)
    }

    @Test func aBadLoadSettingStopsTheRunWith64BeforeAnythingStarts() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let scenario = try trial.script(
            "bad.yaml",
            """
            scenario: server
            workload: command
            strategies:
              - name: fixture
                command: \(Self.fixture) 1 --never-ready
                ready: {port: 1}
                steps:
                  - load: {connections: 0, requests: 10}

            """)
        let outcome = try trial.memharness(["run", scenario, "--out", trial.out])
        #expect(outcome.status == 64, "\(outcome.stderr)")
        #expect(
            outcome.stderr.contains("bad.yaml:8:29: value '0' for 'load.connections' is out of range"),
            "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: trial.out), "no report folder")
        #expect(Self.processes(holding: "1").isEmpty)
    }

    @Test func aServerReadyByALineIsLoadedOnItsPort() throws {
        let (trial, result, _) = try serve(
            // 300 KB of output after its ready line: the line is found however far it scrolled.
            "--ready-after-ms 300 --chatter 300000",
            """
            ready: {line: listening on, timeout: 10s}
            steps:
              - load: {port: "{port}", method: POST, body: 1KiB, connections: 2, requests: 100}
            """)
        defer { trial.remove() }
        #expect(result.status == .ok, "\(result.failureText ?? "")")
        #expect(result.measurements?.metric("requests")?.value == 100)
        #expect(result.measurements?.program?.stderrTail.contains("served 100") == true)
    }

    @Test func aServerThatNeverGetsReadyFailsWithinItsTimeoutWithItsOutput() throws {
        let began = MonotonicClock.nanoseconds()
        let (trial, result, port) = try serve(
            "--never-ready",
            """
            ready: {port: "{port}", timeout: 1s}
            steps:
              - load: {requests: 10}
            """)
        defer { trial.remove() }
        let elapsed = MonotonicClock.nanoseconds() - began
        #expect(result.status == .failed)
        let failure = result.failureText ?? ""
        #expect(failure.contains("not ready within 1s: port \(port) did not accept a connection"), "\(failure)")
        #expect(failure.contains("starting on port \(port)"), "the tail of its output: \(failure)")
        let duration = try #require(result.measurements?.durationNanoseconds)
        #expect(duration < 3_000_000_000, "the case ends at the ready timeout: \(duration) ns (the run \(elapsed) ns)")
    }

    @Test func aServerThatCrashesUnderLoadIsACaseFailureNamingItsSignal() throws {
        let (trial, result, _) = try serve(
            "--crash-after 50",
            """
            ready: {port: "{port}"}
            steps:
              - wait: 100ms
              - load: {connections: 2, requests: 500}
            """)
        defer { trial.remove() }
        #expect(result.status == .crashed)
        let failure = result.failureText ?? ""
        #expect(failure.contains("SIGSEGV") && failure.contains("during phase 'load'"), "\(failure)")
    }

    @Test func aServerDeafToItsStopSignalIsKilledAfterTheGrace() throws {
        let (trial, result, _) = try serve(
            "--ignore-term",
            """
            ready: {line: listening}
            stop: {grace: 300ms}
            """)
        defer { trial.remove() }
        #expect(result.status == .failed)
        let failure = result.failureText ?? ""
        #expect(failure.contains("did not stop within 300ms of SIGTERM: killed"), "\(failure)")
        let stop = result.measurements?.phases.last
        #expect(stop?.name == "stop")
        #expect((stop.map { $0.endNanoseconds - $0.startNanoseconds } ?? 0) >= 300_000_000)
    }
}
