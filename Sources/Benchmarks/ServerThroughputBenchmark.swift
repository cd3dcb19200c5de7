import ChildProcesses
import Foundation
import HarnessModel
import Measurement
import Runner
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// A real server's throughput under load from `memharness-load`, alone and under the agent, interleaved round by round
/// so that the machine's drift hits every way alike: what measuring a server costs it.
enum ServerThroughputBenchmark {
    /// How the server runs.
    enum Way: String, CaseIterable {
        /// jemalloc preloaded, no agent: the reference (the agent preloads jemalloc too, so the allocator is the same).
        case alone
        /// The agent preloaded with its sampler at 1 ms: `memharness profile` of a server, a command strategy.
        case sampled
        /// The agent counting every allocation (`MEMHARNESS_AGENT_EXACT`) and sampling at 1 ms: a server strategy
        /// with load steps given `--interval 1ms`.
        case exact
        /// Exact counts sampled at 10 ms: what a server strategy with load steps uses by default, its per-request
        /// figures and exact peaks from those counts (each sample carries the high since the one before it).
        case server
        /// The same, and every live block tracked with its stack for the heap capture at exit (`--heap-graph`).
        case heapAtExit

        var label: String {
            switch self {
            case .alone: return "alone (jemalloc, no agent)"
            case .sampled: return "sampled, 1 ms"
            case .exact: return "exact counts, 1 ms"
            case .server: return "server strategy: exact counts, 10 ms"
            case .heapAtExit: return "server strategy + heap capture at exit"
            }
        }

        /// The sampler's interval, ns (the agent's ways only).
        var intervalNanoseconds: Int64 { self == .server || self == .heapAtExit ? 10_000_000 : 1_000_000 }
    }

    /// What is run and for how long.
    struct Settings {
        var server: String
        var loadClient: String
        var agent: AgentPreload
        var port: Int
        var path = "/cache/bounded"
        var connections = 4
        var warmupMilliseconds = 1_000
        var loadMilliseconds = 3_000
        var rounds: Int
        var scratch: URL
    }

    /// One server run: started, warmed up, loaded, stopped.
    struct Round {
        var way: Way
        var requestsPerSecond: Double
        var errors: Int
        /// Samples the agent wrote during the measured load; nil without the agent.
        var samples: Int?
        /// Allocations per request the agent counted during the measured load; nil when it does not count exactly.
        var allocationsPerRequest: Double?
        /// From SIGTERM to the server's end, seconds: its graceful stop, with the heap capture when there is one.
        var stopSeconds: Double
        /// The heap capture's size, bytes; nil without one.
        var captureBytes: Int?
        /// CPU time of the server during the measured load (every thread), seconds.
        var serverCPUSeconds: Double
        /// CPU time of the agent's sampler thread during the measured load, seconds; nil without the agent.
        var samplerCPUSeconds: Double?
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(_ settings: Settings) throws -> String {
        var rounds: [Round] = []
        // One run of each way first, not counted: the first start pays for cold page caches.
        for way in Way.allCases { _ = try serve(way, settings, warmupOnly: true) }
        for index in 0..<settings.rounds {
            // Rotate which way goes first so that none always follows the same one.
            let ways = Way.allCases
            for offset in ways.indices { rounds.append(try serve(ways[(index + offset) % ways.count], settings)) }
        }
        return render(rounds, settings)
    }

    /// Starts the server the `way` way, waits for its port, warms it up, measures its throughput, stops it (SIGTERM,
    /// then SIGKILL after 60 s) and checks that its port is free again.
    static func serve(_ way: Way, _ settings: Settings, warmupOnly: Bool = false) throws -> Round {
        let folder = settings.scratch.appendingPathComponent("server-\(way.rawValue)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // A heap capture is temporary: nothing of a round stays behind it.
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let origin = MonotonicClock.nanoseconds()
        let output = open("\(folder)/server.out", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { if output >= 0 { close(output) } }
        let server = try ChildProcess.spawn(
            path: settings.server, arguments: ["\(settings.port)"],
            environment: environment(way, settings, folder: folder, origin: origin),
            stdout: output >= 0 ? output : nil, stderr: output >= 0 ? output : nil)
        var stopped = false
        defer { if !stopped { _ = server.kill() } }
        try waitUntilReady(server, port: settings.port, output: "\(folder)/server.out")
        var figures = try load(settings, milliseconds: settings.warmupMilliseconds, folder: folder)
        let cpuBefore = ThreadCPU.read(server.pid)
        let loadStart = MonotonicClock.nanoseconds() - origin
        if !warmupOnly { figures = try load(settings, milliseconds: settings.loadMilliseconds, folder: folder) }
        let loadEnd = MonotonicClock.nanoseconds() - origin
        let cpu = ThreadCPU.read(server.pid) - cpuBefore
        let stopStart = MonotonicClock.nanoseconds()
        server.send(SIGTERM)
        let ended = try server.wait(timeoutNanoseconds: 60_000_000_000) ?? server.kill()
        stopped = true
        let stopSeconds = Double(MonotonicClock.nanoseconds() - stopStart) / 1e9
        guard ended?.termination == .exited(0) || ended?.termination == .signaled(SIGTERM) else {
            throw Failure(description: "\(settings.server) (\(way.label)) \(String(describing: ended?.termination))")
        }
        try waitUntilFree(settings.port)
        let samples = SampleStream.samples(atPath: "\(folder)/samples.\(server.pid)")?.filter {
            (loadStart...loadEnd).contains($0.time)
        }
        let calls = samples.flatMap { window in
            window.last?.allocationCalls.flatMap { last in window.first?.allocationCalls.map { last - $0 } }
        }
        let capture = try? FileManager.default.attributesOfItem(atPath: "\(folder)/heap.\(server.pid)")[.size] as? Int
        return Round(
            way: way, requestsPerSecond: Double(figures.requests) / (Double(settings.loadMilliseconds) / 1e3),
            errors: figures.errors, samples: way == .alone ? nil : samples?.count,
            allocationsPerRequest: figures.requests > 0 ? calls.map { Double($0) / Double(figures.requests) } : nil,
            stopSeconds: stopSeconds, captureBytes: capture, serverCPUSeconds: cpu.process,
            samplerCPUSeconds: way == .alone ? nil : cpu.sampler)
    }

    /// This process's environment without any agent, with jemalloc preloaded alone, or the agent (and jemalloc after
    /// it) as the harness sets it for `way`.
    static func environment(_ way: Way, _ settings: Settings, folder: String, origin: Int64) -> [String: String] {
        var variables = ProcessInfo.processInfo.environment.filter {
            $0.key != "LD_PRELOAD" && !$0.key.hasPrefix("MEMHARNESS_AGENT_")
        }
        guard way != .alone else {
            if let jemalloc = settings.agent.jemalloc { variables["LD_PRELOAD"] = jemalloc }
            return variables
        }
        variables.merge(settings.agent.variables(exact: way != .sampled)) { $1 }
        variables["MEMHARNESS_AGENT_INTERVAL_NS"] = String(way.intervalNanoseconds)
        variables["MEMHARNESS_AGENT_SAMPLES"] = "\(folder)/samples.%p"
        variables["MEMHARNESS_AGENT_ORIGIN_NS"] = String(origin)
        if way == .heapAtExit { variables["MEMHARNESS_AGENT_HEAP_AT_EXIT"] = "\(folder)/heap.%p" }
        return variables
    }

    /// Polls the port every 10 ms for 30 s at most; throws when the server ended or never listened.
    static func waitUntilReady(_ server: ChildProcess, port: Int, output: String) throws {
        let limit = MonotonicClock.nanoseconds() + 30_000_000_000
        while !LocalPort.accepts(port) {
            if let end = try server.wait(timeoutNanoseconds: 10_000_000) {
                throw Failure(description: "the server ended before it was ready: \(end.termination); see \(output)")
            }
            guard MonotonicClock.nanoseconds() < limit else {
                throw Failure(description: "the server did not listen on port \(port) within 30 s")
            }
        }
    }

    /// Waits (at most 5 s) until nothing accepts on the port any more.
    static func waitUntilFree(_ port: Int) throws {
        let limit = MonotonicClock.nanoseconds() + 5_000_000_000
        while LocalPort.accepts(port) {
            guard MonotonicClock.nanoseconds() < limit else {
                throw Failure(description: "port \(port) still accepts connections after the server ended")
            }
            usleep(10_000)
        }
    }

    /// Runs the load client for `milliseconds` and reads its figures.
    static func load(_ settings: Settings, milliseconds: Int, folder: String) throws -> LoadFigures {
        let path = "\(folder)/load.out"
        let output = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { if output >= 0 { close(output) } }
        let client = try ChildProcess.spawn(
            path: settings.loadClient,
            arguments: [
                "--port", "\(settings.port)", "--path", settings.path, "--connections", "\(settings.connections)",
                "--duration-ms", "\(milliseconds)",
            ],
            environment: ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" },
            stdout: output >= 0 ? output : nil, stderr: output >= 0 ? output : nil)
        guard case .ended(let end) = try client.wait(upTo: Int64(milliseconds) * 1_000_000 + 60_000_000_000),
            end.termination == .exited(0),
            let figures = LoadClient.figures((try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
        else {
            throw Failure(description: "\(settings.loadClient) failed; its output: \(path)")
        }
        return figures
    }
}

extension BenchEnvironment {
    /// The server benchmark's settings: the server, the load client and the agent it needs (a clear error when one is
    /// missing, before any server starts), the port free.
    func serverSettings(_ options: BenchOptions) throws -> ServerThroughputBenchmark.Settings {
        typealias Failure = ServerThroughputBenchmark.Failure
        guard FileManager.default.isExecutableFile(atPath: options.server) else {
            throw Failure(
                description: "\(options.server) is missing; build it with `swift build -c release --package-path "
                    + "Examples/ServerLeaks --product server-leaks` (`make bench-server-throughput` does)")
        }
        guard let loadClient = LoadClient.locate(besideExecutable: plainBinary) else {
            throw Failure(description: LoadClient.missingDescription(besideExecutable: plainBinary))
        }
        guard let agent else {
            throw Failure(description: AgentPreload.missingDescription(besideExecutable: plainBinary))
        }
        guard (1...65_535).contains(options.port), !LocalPort.accepts(options.port) else {
            throw Failure(description: "port \(options.port) is not a free port number (--port)")
        }
        return ServerThroughputBenchmark.Settings(
            server: options.server, loadClient: loadClient, agent: agent, port: options.port,
            rounds: max(options.rounds, 5), scratch: scratch)
    }
}

/// CPU time of a process and of the agent's sampler thread (`memharness-smp`) in it, from /proc: what the sampler
/// costs, apart from the noise of the server's throughput.
struct ThreadCPU {
    var process = 0.0
    var sampler = 0.0

    static func - (after: ThreadCPU, before: ThreadCPU) -> ThreadCPU {
        ThreadCPU(process: after.process - before.process, sampler: after.sampler - before.sampler)
    }

    /// Reads /proc/PID/stat and every /proc/PID/task/TID/stat whose comm is the sampler's; zeros when /proc is not
    /// there.
    static func read(_ pid: Int32) -> ThreadCPU {
        var figures = ThreadCPU(process: seconds(stat: "/proc/\(pid)/stat"))
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            if comm.hasPrefix("memharness-smp") { figures.sampler += seconds(stat: "/proc/\(pid)/task/\(task)/stat") }
        }
        return figures
    }

    /// utime + stime of a stat file (fields 14 and 15, counted after the command's closing parenthesis), seconds.
    static func seconds(stat path: String) -> Double {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After ")": state is field 3, so utime (14) and stime (15) are at offsets 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
