import ChildProcesses
import FileIO
import Foundation
import HarnessModel
import Reports
import TestSupport
import Testing
import WorkloadKit

@testable import Runner

#if os(Linux)
    import Glibc
#endif

/// Heap captures between a server's load rounds (`capture: rounds`), end to end on `http-fixture`, whose blocks per
/// request are known by construction: `--retain BYTES` keeps one block per request that a root reaches, `--leak BYTES`
/// one that none does. Every round of R requests must add exactly R blocks of each, R leaked blocks per capture (or
/// held by a serving thread's stale stack words alone, until the exit), and a server that forks or exits while it is asked for a capture is neither broken nor left
/// stopped, with nothing left in the temporary folder.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ServerHeapGenerationTests {
    /// Runs the fixture with `arguments` under one load step `load` (with `capture: rounds`) and `expect: leaks`;
    /// returns the run's outcome and the case that captured the heap. The run's temporary folder is one of its own:
    /// it must be empty afterwards, and no process of the fixture may be left (stopped or not).
    func serve(_ arguments: String, load: String) throws -> (CommandLineTests.Outcome, CaseResult) {
        try ServerEndToEndTests.requireBuilt()
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let temporary = "\(trial.folder)/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let port = try #require(LocalPorts.free())
        let strategy = """
            expect: leaks
            ready: {port: "{port}", timeout: 10s}
            steps:
              - load: {\(load), capture: rounds}
            """
        let scenario = try trial.script(
            "server.yaml", ServerEndToEndTests.scenario(port: port, arguments, strategy))
        let outcome = try trial.memharness(["run", scenario, "--out", trial.out], environment: ["TMPDIR": temporary])
        #expect(ServerEndToEndTests.processes(holding: "\(port)").isEmpty, "nothing outlives the run")
        #expect(LocalPorts.canListen(on: port), "the port \(port) is free again")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? ["?"]
        #expect(left.isEmpty, "left in the temporary folder: \(left)")
        let record = try ReportFolder.read(trial.out)
        let cases = record.report.scenarios.flatMap(\.instrumentedCases)
        try #require(cases.count == 1, "\(cases)")
        return (outcome, cases[0])
    }

    static let requests = 300

    @Test func eachRoundAddsExactlyTheBlocksItsRequestsKeepAndLeak() throws {
        let (outcome, result) = try serve(
            "--retain 4000 --leak 3000", load: "path: /, connections: 2, requests: \(Self.requests), rounds: 3")
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        #expect(result.status == .ok, "\(result.failureText ?? "")")
        let heap = try #require(result.measurements?.heapGraph)
        #expect(heap.failures.isEmpty, "\(heap.failures)")
        // Four captures while serving (before the first round, after each), then the one at exit.
        #expect(heap.generationLabels == ["load before round 1", "load round 1", "load round 2", "load round 3"])
        #expect(heap.captures.map(\.label).suffix(1) == ["at exit"], "\(heap.captures.map(\.label))")
        let perRound = Array(repeating: Self.requests, count: 3)
        // The probe first: the retained and the leaked blocks are in the captures, by their size class.
        let kept = heap.growth.filter { $0.countDeltas == perRound && $0.byteDeltas == perRound.map { $0 * 4096 } }
        let leaked = heap.growth.filter { $0.countDeltas == perRound && $0.byteDeltas == perRound.map { $0 * 3072 } }
        #expect(kept.count == 1, "\(heap.growth.map { ($0.type, $0.countDeltas, $0.byteDeltas) })")
        #expect(leaked.count == 1, "\(heap.growth.map { ($0.type, $0.countDeltas, $0.byteDeltas) })")
        #expect(kept.first?.isSuspect == true && leaked.first?.isSuspect == true)
        // Leaked per capture: what no root reaches grows by the round's requests, capture after capture. The scan is
        // conservative: a connection's thread still alive at a capture keeps in its live frames words that the calls
        // of earlier requests left on its stack (the unread part of its 16 KiB request buffer overlays them), so a few
        // of the round's leaked blocks may read as reachable, held by that thread's stack alone, until the thread
        // ends; all are found at exit. Seen: up to 5 of 300 with both threads of the round still alive (load 11 on
        // two cores), none when they had ended. Bounded here by 5 words per connection.
        let leaks = heap.captures.map(\.leakedBlocks)
        let baseline = leaks.first ?? 0
        for round in 1...3 {
            let found = leaks[round] - baseline
            #expect((round * Self.requests - 10)...(round * Self.requests) ~= found, "leaked per capture \(leaks)")
        }
        #expect(leaks.last == baseline + 3 * Self.requests, "leaked blocks per capture \(leaks)")
        let measurements = try #require(result.measurements)
        // Live growth from the captures, reachable or not: 4,096 + 3,072 B per request (the size classes), within 2%.
        let growth = try #require(measurements.metric("capturedLiveGrowthPer1000Requests")?.value)
        #expect(abs(growth - 7_168_000) <= 7_168_000 * 0.02, "captured live growth per 1,000 requests \(growth)")
        let pause = try #require(measurements.metric("heapCapturePause")?.value)
        let bytes = try #require(measurements.metric("heapCaptureBytes")?.value)
        #expect(pause > 0 && bytes > 0)
        print(
            "captures between rounds: pause \(pause) ms (median), \(Int(bytes)) bytes; leaked per capture \(leaks); "
                + "captured live growth per 1,000 requests \(growth)")
    }

    @Test func aServerThatForksWhileItsHeapIsCapturedIsNotBroken() throws {
        let (outcome, result) = try serve(
            "--retain 4000 --fork-every 25", load: "path: /, connections: 2, requests: \(Self.requests), rounds: 3")
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        #expect(result.status == .ok, "\(result.failureText ?? "")")
        let heap = try #require(result.measurements?.heapGraph)
        #expect(heap.generationLabels.count == 4, "\(heap.generationLabels) \(heap.failures)")
        let perRound = Array(repeating: Self.requests, count: 3)
        #expect(
            heap.growth.contains { $0.countDeltas == perRound && $0.byteDeltas == perRound.map { $0 * 4096 } },
            "\(heap.growth.map { ($0.type, $0.countDeltas) })")
    }

    @Test func aServerThatExitsWhenAskedForACaptureEndsItsCaseWithoutAHang() throws {
        let started = MonotonicClock.nanoseconds()
        let (_, result) = try serve(
            "--exit-after \(Self.requests)", load: "path: /, connections: 1, requests: \(Self.requests), rounds: 3")
        // It stopped serving by itself during its load step: a failure of the case that names the phase.
        #expect(result.status != .ok)
        #expect(result.failureText?.contains("'load'") == true, "\(result.failureText ?? "")")
        let elapsed = Double(MonotonicClock.nanoseconds() - started) / 1e9
        #expect(elapsed < 60, "\(elapsed) s")
    }

    /// Whether the server on `port` answers a GET within `timeout` seconds (a server held stopped answers none).
    static func answers(port: Int, within timeout: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var wait = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return false }
        let request = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return false }
        var buffer = [UInt8](repeating: 0, count: 256)
        return recv(fd, &buffer, buffer.count, 0) > 0
    }

    @Test func aServerHeldForACaptureGoesOnWhenTheHarnessEnds() throws {
        try ServerEndToEndTests.requireBuilt()
        let port = try #require(LocalPorts.free())
        var requests = try #require(CaptureRequests())
        let environment = ProcessInfo.processInfo.environment.merging([
            "LD_PRELOAD": "\(ProgramTrial.agentLibrary) libjemalloc.so.2", "MEMHARNESS_AGENT_HEAP": "1",
            "MEMHARNESS_AGENT_CAPTURE_SOCKET": requests.name,
        ]) { $1 }
        let server = try ChildProcess.spawn(
            path: ServerEndToEndTests.fixture, arguments: ["\(port)", "--retain", "4000"], environment: environment)
        defer { _ = server.kill() }
        let ready = MonotonicClock.nanoseconds() + 10_000_000_000
        while !Self.answers(port: port, within: 1) && MonotonicClock.nanoseconds() < ready { usleep(20_000) }
        // The probe first: it serves.
        #expect(Self.answers(port: port, within: 5))
        guard case .held(let pending) = requests.request(of: server.pid, label: "held") else {
            Issue.record("the capture was not written")
            return
        }
        close(pending.file)
        // Held with its capture written: a request gets no answer.
        #expect(!Self.answers(port: port, within: 1), "a held server answered")
        // The harness ends without an answer (its socket closes): the server goes on at once.
        requests = try #require(CaptureRequests())
        let released = MonotonicClock.nanoseconds()
        #expect(Self.answers(port: port, within: 5), "the server still held after its harness ended")
        #expect(MonotonicClock.nanoseconds() - released < 5_000_000_000)
        server.send(SIGTERM)
        let end = try server.wait(timeoutNanoseconds: 5_000_000_000)
        #expect(end?.termination == .exited(0), "\(String(describing: end))")
    }
}
