import ChildProcesses
import Foundation
import HarnessModel
import HeapGraph
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// A phase of a served case: its name and its span, nanoseconds since the agent's origin.
struct PhaseSpan: Equatable {
    var name: String
    var start: Int64
    var end: Int64
}

/// What serving did besides the server's own end: its phases, the load's figures, and why the case failed when
/// the server itself did not end it (never ready, a step that failed, no stop within the grace).
struct ServedRun {
    var phases: [PhaseSpan] = []
    var metrics: [Metric] = []
    var failure: String?
    /// The phase during which the server ended by itself (a crash under load); nil when it was stopped.
    var endedDuring: String?
    /// The requests the load steps' rounds answered, warm-up included.
    var requests = 0
    /// The heap captures taken while the server served (`capture: rounds`), analysed as generations; nil when the
    /// case captures none.
    var heap: HeapGenerationTracker?

    /// `leakedBlocksPerRequest` when the case captured the heap at the server's exit and the load answered requests:
    /// the blocks no root reaches in the last capture, less those of known leaks (`suppressions`), as the leak figures
    /// leave them out.
    func leakMetrics(_ heapGraph: HeapGraphSummary?, suppressions: [LeakSuppression]) -> [Metric] {
        guard requests > 0, let last = heapGraph?.last else { return [] }
        let leaked = max(last.leakedBlocks - SuppressedLeaks(last, suppressions: suppressions).unreachable.blocks, 0)
        return [Metric(name: ServerPlan.leakedBlocksPerRequest, value: Double(leaked) / Double(requests), unit: .count)]
    }
}

/// One served case: the server started, made ready, driven and stopped; the harness's side of `ServerPlan`.
struct ServerSession {
    let plan: ServerPlan
    let child: ChildProcess
    let work: CaseWorkFolder
    /// The agent's origin (`MEMHARNESS_AGENT_ORIGIN_NS`): phase spans are counted from it, as samples are.
    let origin: Int64
    /// The case's end at the latest (its timeout), on the monotonic clock.
    let deadline: Int64
    /// The environment of the load client and of command steps: the launcher's, without the agent.
    let clientEnvironment: [String: String]
    /// The load client (`memharness-load`); nil when there is none (a plan with load steps is refused first).
    let loadClient: String?
    /// Where command steps run: the strategy's `directory`.
    let workingDirectory: String?
    /// The server's sample stream (read as it grows), and the agent's interval: the exact counts at step and round
    /// boundaries.
    var stream = SampleStreamTail(path: "")
    var sampleIntervalNanoseconds: Int64 = 0
    /// The server's heap captured on request (a case with a heap graph whose load steps capture between rounds).
    var captures: CaptureRequests?

    /// How often readiness is looked at.
    static let readyPollNanoseconds: Int64 = 10_000_000
    /// The lines of output a failure quotes.
    static let tailLines = 10

    var now: Int64 { MonotonicClock.nanoseconds() }

    /// Runs the plan to the server's end; the server's wait as for a program run to its end.
    func run(heap: HeapGenerationTracker? = nil) -> (BoundedWait, ServedRun) {
        var served = ServedRun()
        served.heap = captures != nil ? heap : nil
        let started = now
        switch waitUntilReady() {
        case .ready: break
        case .ended(let end):
            served.endedDuring = ServerPlan.startPhase
            served.phases.append(span(ServerPlan.startPhase, from: started))
            return (.ended(end), served)
        case .notReady(let reason):
            served.failure = reason
            served.phases.append(span(ServerPlan.startPhase, from: started))
            return (.timedOut(killed: child.kill()).reapedAsEnded, served)
        }
        served.phases.append(span(ServerPlan.startPhase, from: started))
        var counts = plan.hasLoadSteps ? sample(after: now) : nil
        for step in plan.steps {
            let stepStart = now
            let result = run(step, served: &served, counts: &counts)
            served.phases.append(span(step.phase, from: stepStart))
            switch result {
            case .next: continue
            case .serverEnded(let end):
                served.endedDuring = step.phase
                return (.ended(end), served)
            case .failed(let reason):
                served.failure = reason
                return (.timedOut(killed: child.kill()).reapedAsEnded, served)
            case .outOfTime:
                return (.timedOut(killed: child.kill()), served)
            }
        }
        return stop(&served)
    }

    /// Sends the stop signal, waits the grace, then kills the server's group.
    private func stop(_ served: inout ServedRun) -> (BoundedWait, ServedRun) {
        let stopStart = now
        child.send(plan.stopSignal)
        let grace = min(plan.graceNanoseconds, max(deadline - now, 0))
        let ended = try? child.wait(timeoutNanoseconds: grace)
        if let ended = ended ?? nil {
            served.phases.append(span(ServerPlan.stopPhase, from: stopStart))
            return (.ended(ended), served)
        }
        let killed = child.kill()
        served.phases.append(span(ServerPlan.stopPhase, from: stopStart))
        served.failure =
            "did not stop within \(Units.formatDurationExactly(nanoseconds: plan.graceNanoseconds)) of "
            + "\(SignalNames.name(of: plan.stopSignal)): killed with its process group (SIGKILL)"
        return (.timedOut(killed: killed).reapedAsEnded, served)
    }

    private func span(_ name: String, from start: Int64) -> PhaseSpan {
        PhaseSpan(name: name, start: start - origin, end: now - origin)
    }

    // MARK: Readiness

    enum Readiness {
        case ready
        case ended(ChildEnd)
        case notReady(String)
    }

    /// Looks every `readyPollNanoseconds` whether the port accepts or the line was printed, at most the ready timeout.
    func waitUntilReady() -> Readiness {
        let limit = min(now + plan.readyTimeoutNanoseconds, deadline)
        var watches = [work.stdout, work.stderr].map { TextWatch(path: $0) }
        while true {
            if isReady(&watches) { return .ready }
            let left = limit - now
            guard left > 0 else { break }
            if let end = (try? child.wait(timeoutNanoseconds: min(left, Self.readyPollNanoseconds))) ?? nil {
                return .ended(end)
            }
        }
        let what: String
        switch plan.readiness {
        case .port(let port): what = "port \(port) did not accept a connection"
        case .line(let line): what = "it did not print '\(line)'"
        }
        let timeout = Units.formatDurationExactly(nanoseconds: plan.readyTimeoutNanoseconds)
        return .notReady("not ready within \(timeout): \(what)" + outputTail)
    }

    /// Whether the port accepts, or the line has appeared in what `watches` (the server's output) read so far.
    func isReady(_ watches: inout [TextWatch]) -> Bool {
        switch plan.readiness {
        case .port(let port): return Int(port).map(LocalPort.accepts) ?? false
        case .line(let line): return watches.indices.contains { watches[$0].found(line) }
        }
    }

    /// The last lines of the server's standard output and error, after a colon; empty when it printed nothing.
    var outputTail: String {
        let lines = [work.stdout, work.stderr].map { ChildOutput(path: $0).lastLines(Self.tailLines) }
            .filter { !$0.isEmpty }
        return lines.isEmpty ? "; it printed nothing" : "; the end of its output: " + lines.joined(separator: "\n")
    }

    // MARK: Steps

    enum StepResult {
        case next
        case serverEnded(ChildEnd)
        case failed(String)
        case outOfTime
    }

    /// Runs one step; with exact counts (`counts`: the last sample taken at a boundary), adds its allocations and a
    /// load step's per-request figures to the metrics, and leaves the sample after it in `counts`.
    private func run(_ step: ServerStep, served: inout ServedRun, counts: inout CountedSample?) -> StepResult {
        let before = counts
        switch step.action {
        case .wait(let nanoseconds):
            guard now + nanoseconds <= deadline else { return .outOfTime }
            if let end = (try? child.wait(timeoutNanoseconds: nanoseconds)) ?? nil { return .serverEnded(end) }
        case .load(let load):
            if let ended = runRounds(load, phase: step.phase, served: &served, counts: &counts) { return ended }
        case .command(let words):
            if let failure = runCommand(words, phase: step.phase) { return failure.result }
        }
        if let end = (try? child.wait(timeoutNanoseconds: 0)) ?? nil { return .serverEnded(end) }
        if before != nil && !step.isLoad { counts = sample(after: now) }
        if let first = before?.counts, let last = counts?.counts {
            served.metrics += ServerStep.allocationMetrics(phase: step.phase, before: first, after: last)
        }
        return .next
    }

    /// Runs a load step's warm-up and measured rounds; its figures (the rounds' together, and the per-request figures
    /// of the measured ones when the agent counts exactly) go to the metrics. nil when every round ran.
    private func runRounds(
        _ load: LoadRequest, phase: String, served: inout ServedRun, counts: inout CountedSample?
    ) -> StepResult? {
        var figures: [LoadFigures] = []
        var rounds: [LoadRound] = []
        defer { served.metrics += LoadFigures.combined(figures)?.metrics(phase: phase) ?? [] }
        let capturing = load.capturesRounds && served.heap != nil
        // The captures' live bytes (reachable or not) over the requests answered before each: their slope.
        var captured: [(x: Double, y: Double)] = []
        defer {
            if let fit = LinearFit.leastSquares(captured) {
                served.metrics.append(
                    Metric(
                        name: LoadFigures.metricName(ServerPlan.capturedLiveGrowthPer1000Requests, phase: phase),
                        value: fit.slope * 1_000, unit: .bytes))
            }
        }
        func capture(_ label: String, served: inout ServedRun) {
            captureHeap(label, served: &served)
            guard let live = served.heap?.summary.captures.last, live.label == label else { return }
            captured.append((x: Double(figures.map(\.requests).reduce(0, +)), y: Double(live.liveBytes)))
        }
        if capturing && load.warmupRounds == 0 { capture("\(phase) before round 1", served: &served) }
        for index in 0..<(load.warmupRounds + load.rounds) {
            switch runLoad(load, phase: phase) {
            case .success(let round):
                figures.append(round)
                served.requests += round.requests
            case .failure(let failure): return failure.result
            }
            if let end = (try? child.wait(timeoutNanoseconds: 0)) ?? nil { return .serverEnded(end) }
            if capturing && index + 1 >= load.warmupRounds {
                let round = index + 1 - load.warmupRounds
                capture(round == 0 ? "\(phase) after warm-up" : "\(phase) round \(round)", served: &served)
            }
            guard let before = counts else { continue }
            counts = sample(after: now)
            guard let after = counts else { continue }
            rounds.append(
                LoadRound(
                    figures: figures[figures.count - 1], before: before.counts, after: after.counts,
                    peakLiveBytes: after.peakLiveBytes(since: before)))
        }
        let measured = Array(rounds.dropFirst(load.warmupRounds))
        if measured.count == load.rounds,
            let perRequest = PerRequestFigures(rounds: measured, connections: load.connections)
        {
            served.metrics += perRequest.metrics(phase: phase)
        }
        return nil
    }

    /// The server's heap now, named while it is held stopped, then analysed as the next generation (the analysis runs
    /// with the server serving again).
    private func captureHeap(_ label: String, served: inout ServedRun) {
        guard let captures, served.heap != nil else { return }
        served.heap?.add(captures.capture(of: child.pid, label: label), isGeneration: true)
    }

    /// Why a step did not complete.
    struct StepFailure: Error {
        var result: StepResult
    }

    /// Runs the load client to its end (at most until the case's deadline) and reads its figures.
    private func runLoad(_ load: LoadRequest, phase: String) -> Result<LoadFigures, StepFailure> {
        guard let loadClient else {
            return .failure(StepFailure(result: .failed("there is no load client (\(LoadClient.executableName))")))
        }
        var arguments = [
            "--port", load.port, "--method", load.method, "--path", load.path, "--connections", "\(load.connections)",
            "--body", "\(load.bodyBytes)",
        ]
        if let requests = load.requests { arguments += ["--requests", "\(requests)"] }
        if let duration = load.durationNanoseconds {
            arguments += ["--duration-ms", "\(max(duration / 1_000_000, 1))"]
        }
        let output = "\(work.root)/\(phase).out"
        switch runClient(path: loadClient, arguments: arguments, output: output, phase: phase) {
        case .failure(let failure): return .failure(failure)
        case .success:
            guard let figures = LoadClient.figures(ChildOutput(path: output).text) else {
                let text = ChildOutput(path: output).lastLines(3)
                return .failure(
                    StepFailure(result: .failed("step '\(phase)': the load client printed no figures: \(text)")))
            }
            return .success(figures)
        }
    }

    /// Runs a command step to its end; nil when it exited 0.
    private func runCommand(_ words: [String], phase: String) -> StepFailure? {
        guard let path = words.first else { return nil }
        if case .failure(let failure) = runClient(
            path: path, arguments: Array(words.dropFirst()), output: "\(work.root)/\(phase).out", phase: phase,
            workingDirectory: workingDirectory)
        {
            return failure
        }
        return nil
    }

    /// Runs a client of the server (the load client, a step's command) without the agent, its output in `output`.
    private func runClient(
        path: String, arguments: [String], output: String, phase: String, workingDirectory: String? = nil
    ) -> Result<Void, StepFailure> {
        let descriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { if descriptor >= 0 { close(descriptor) } }
        let fd = descriptor >= 0 ? descriptor : nil
        let waited: BoundedWait
        do {
            let client = try ChildProcess.spawn(
                path: path, arguments: arguments, environment: clientEnvironment, stdout: fd, stderr: fd,
                workingDirectory: workingDirectory)
            waited = try client.wait(upTo: max(deadline - now, 0))
        } catch {
            return .failure(StepFailure(result: .failed("step '\(phase)': \(error.description)")))
        }
        guard let end = waited.endedWithinBound else { return .failure(StepFailure(result: .outOfTime)) }
        guard end.termination != .exited(0) else { return .success(()) }
        let tail = ChildOutput(path: output).lastLines(3)
        return .failure(
            StepFailure(
                result: .failed(
                    "step '\(phase)' (\(([path] + arguments).joined(separator: " "))) \(end.termination.endedText)"
                        + (tail.isEmpty ? "" : ": \(tail)"))))
    }
}

extension BoundedWait {
    /// A server killed by the harness (not ready, a failed step, no stop in the grace) ended: its end when it was
    /// reaped, so that its figures are read as those of any ended program.
    var reapedAsEnded: BoundedWait {
        if case .timedOut(let killed?) = self { return .ended(killed) }
        return self
    }
}

extension TerminationStatus {
    /// `exited with status 3`, `was killed by SIGSEGV`.
    var endedText: String {
        switch self {
        case .exited(let status): return "exited with status \(status)"
        case .signaled(let signal): return "was killed by \(SignalNames.name(of: signal))"
        }
    }
}

/// A file another process writes, read as it grows: whether a text has appeared in it, however much came after.
struct TextWatch {
    let path: String
    /// How far the file was read.
    private var offset: UInt64 = 0
    /// The end of what was read, as long as the text less one byte: a text split between two reads is still found.
    private var carry = Data()

    init(path: String) { self.path = path }

    /// Reads what was written since the last look; true when `text` is in the file.
    mutating func found(_ text: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }  // read-only: closing cannot lose anything
        guard (try? handle.seek(toOffset: offset)) != nil, let added = try? handle.readToEnd(), !added.isEmpty else {
            return false
        }
        offset += UInt64(added.count)
        let window = carry + added
        let needle = Data(text.utf8)
        if window.range(of: needle) != nil { return true }
        carry = window.suffix(max(needle.count - 1, 0))
        return false
    }
}

/// TCP on 127.0.0.1: whether a port accepts a connection (a server's readiness; the tests' "the port is free").
public enum LocalPort {
    public static func accepts(_ port: Int) -> Bool {
        guard (1...65_535).contains(port) else { return false }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// The load client of `load` steps: `memharness-load` beside the harness executable (or `MEMHARNESS_LOAD_CLIENT`).
public enum LoadClient {
    public static let executableName = "memharness-load"

    /// Its path; nil when it is not there.
    public static func locate(besideExecutable executable: String) -> String? {
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["MEMHARNESS_LOAD_CLIENT"],
            URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(executableName).path,
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Why it is missing, and how to build it.
    public static func missingDescription(besideExecutable executable: String) -> String {
        "a server scenario's load step needs \(executableName) beside \(executable) (or in MEMHARNESS_LOAD_CLIENT); "
            + "build it with `swift build --product \(executableName)` (memharness's `make build` does)"
    }

    /// The figures of its output (`requests N`, `errors N`, `bytes N`, `latency_p50_ns N`, `latency_p99_ns N`); nil
    /// when one is missing.
    public static func figures(_ text: String) -> LoadFigures? {
        var values: [String: Int64] = [:]
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 2, let value = Int64(words[1]) { values[String(words[0])] = value }
        }
        guard let requests = values["requests"], let errors = values["errors"], let bytes = values["bytes"],
            let p50 = values["latency_p50_ns"], let p99 = values["latency_p99_ns"]
        else { return nil }
        return LoadFigures(
            requests: Int(requests), errors: Int(errors), bytes: Int(bytes), latencyP50Nanoseconds: p50,
            latencyP99Nanoseconds: p99)
    }
}

extension ProgramCase {
    /// Why a server case cannot start (no load client for its load steps, its port taken by another program); nil
    /// when it can.
    func serverProblem(_ plan: ServerPlan) -> CaseOutcome? {
        if plan.hasLoadSteps && loadClient == nil {
            return .notMeasured(
                reason: LoadClient.missingDescription(besideExecutable: ProcessCaseLauncher.currentExecutable))
        }
        // The file's ports were checked when it was read; a parameter set on the command line (`--set port=...`) is
        // free text until here.
        let ports =
            [plan.port]
            + plan.steps.map { step -> String? in
                if case .load(let load) = step.action { return load.port } else { return nil }
            }
        for port in ports.compactMap({ $0 }) where Int(port).map({ !(1...65_535).contains($0) }) ?? true {
            return .notMeasured(reason: "port '\(port)' is not a port number in 1...65535")
        }
        if let port = plan.port, let number = Int(port), LocalPort.accepts(number) {
            return .notMeasured(
                reason: "port \(port) already accepts connections before the server starts: another program "
                    + "listens there (its readiness and load would be that program's)")
        }
        return nil
    }

    /// Starts the server with the agent, and runs its plan: ready, steps, stop.
    func serve(_ program: ProgramInvocation, _ plan: ServerPlan, origin: Int64) throws(ChildProcessError)
        -> (ChildProcess, BoundedWait, ServedRun)
    {
        let stdout = open(work.stdout, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let stderr = open(work.stderr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            if stdout >= 0 { close(stdout) }
            if stderr >= 0 { close(stderr) }
        }
        // With a heap graph, load steps with `capture: rounds` capture the server's heap on request between rounds.
        let captures = spec.heapGraph != nil && plan.capturesRounds ? CaptureRequests() : nil
        var environment = agentEnvironment(origin: origin)
        if let captures { environment["MEMHARNESS_AGENT_CAPTURE_SOCKET"] = captures.name }
        let child = try ChildProcess.spawn(
            path: program.executable, arguments: program.arguments,
            environment: environment, stdout: stdout >= 0 ? stdout : nil,
            stderr: stderr >= 0 ? stderr : nil, workingDirectory: program.workingDirectory)
        let session = ServerSession(
            plan: plan, child: child, work: work, origin: origin, deadline: origin + spec.timeoutNanoseconds,
            clientEnvironment: clientEnvironment, loadClient: loadClient, workingDirectory: program.workingDirectory,
            stream: SampleStreamTail(path: work.programSamples(of: child.pid)),
            sampleIntervalNanoseconds: samplerIntervalNanoseconds,
            captures: captures)
        var (waited, served) = session.run(heap: heapTracker)
        if let captures { served.metrics += captures.costMetrics }
        return (child, waited, served)
    }

    /// The launcher's environment without the agent: the load client's and command steps' (their allocations are
    /// not the server's, and their samples would join its tree).
    var clientEnvironment: [String: String] {
        var variables = environment.filter { !$0.key.hasPrefix("MEMHARNESS_AGENT_") }
        variables["LD_PRELOAD"] = ProcessInfo.processInfo.environment["LD_PRELOAD"]
        return variables
    }

    /// A served case's outcome: a failure of the harness's side first (never ready, a failed step, no stop within the
    /// grace), then the server's own end: stopped by the stop signal (exit 0, or killed by that signal) is complete;
    /// an end of its own before the stop is a failure or a crash naming the phase.
    func outcome(of termination: TerminationStatus, served: ServedRun, plan: ServerPlan, measurements: CaseMeasurements)
        -> CaseOutcome
    {
        if let failure = served.failure { return .failed(reason: failure, measurements: measurements) }
        if let phase = served.endedDuring {
            guard termination == .exited(0) else {
                return outcome(of: termination, during: phase, measurements: measurements)
            }
            return .failed(
                reason: "stopped serving by itself (exit status 0) during phase '\(phase)', before its stop",
                measurements: measurements)
        }
        if termination == .signaled(plan.stopSignal) { return .completed(measurements: measurements) }
        return outcome(of: termination, during: ServerPlan.stopPhase, measurements: measurements)
    }
}
