/// A command strategy that serves (`ready:`, `steps:`, `stop:` in a scenario file): the program is started, waited
/// for until it is ready, driven by steps while it serves, then stopped gracefully. Values only: the runner acts.
///
/// Texts that may hold `{parameter}` placeholders (the port, a command's words) are kept as written until the run is
/// planned (`filled`).
public struct ServerPlan: Sendable, Hashable, Codable {
    /// How the harness knows the server is ready.
    public enum Readiness: Sendable, Hashable, Codable {
        /// A TCP connection to 127.0.0.1 at this port (text, possibly a placeholder) is accepted.
        case port(String)
        /// This text appears in the server's standard output or error.
        case line(String)
    }

    public var readiness: Readiness
    /// How long the server may take to become ready, nanoseconds: past it the case fails with its output's tail.
    public var readyTimeoutNanoseconds: Int64
    /// What runs while it serves, in order: each step is a phase with its own peak.
    public var steps: [ServerStep]
    /// The signal that asks it to stop (SIGTERM unless the file says otherwise).
    public var stopSignal: Int32
    /// How long it may take to stop after `stopSignal` before its process group is killed, nanoseconds.
    public var graceNanoseconds: Int64

    public init(
        readiness: Readiness, readyTimeoutNanoseconds: Int64, steps: [ServerStep], stopSignal: Int32,
        graceNanoseconds: Int64
    ) {
        self.readiness = readiness
        self.readyTimeoutNanoseconds = readyTimeoutNanoseconds
        self.steps = steps
        self.stopSignal = stopSignal
        self.graceNanoseconds = graceNanoseconds
    }

    /// The phase from the start until the server is ready.
    public static let startPhase = "start"
    /// The phase from the stop signal until the server ended.
    public static let stopPhase = "stop"
    /// The metric of a server case that captures its heap at its exit: blocks no root reaches over the requests its
    /// load steps answered (warm-up rounds included).
    public static let leakedBlocksPerRequest = "leakedBlocksPerRequest"
    /// The metrics of a server case that captures its heap between load rounds (`capture: rounds`): how long a
    /// capture kept the server stopped (its naming included; the median over the captures, milliseconds) and the
    /// bytes it wrote (the median).
    public static let heapCapturePause = "heapCapturePause"
    public static let heapCaptureBytes = "heapCaptureBytes"
    /// The metric of a load step with `capture: rounds`: the least-squares slope of its captures' live bytes (every
    /// block, reachable or not) over the requests answered, per 1,000 requests.
    public static let capturedLiveGrowthPer1000Requests = "capturedLiveGrowthPer1000Requests"

    /// The phases of a served case, in order: start, one per step, stop.
    public var phaseNames: [String] { [Self.startPhase] + steps.map(\.phase) + [Self.stopPhase] }

    /// The port the server listens on, as written: the readiness port, else the first load step's.
    public var port: String? {
        if case .port(let port) = readiness { return port }
        return steps.lazy.compactMap { step -> String? in
            if case .load(let load) = step.action { return load.port }
            return nil
        }.first
    }

    /// True when the server has a load step: its agent then counts every allocation (per-request figures, each
    /// step's allocations), the cost of one add per call.
    public var hasLoadSteps: Bool {
        steps.contains(where: \.isLoad)
    }

    /// True when a load step captures the heap between its rounds (`capture: rounds`): the case has a heap graph.
    public var capturesRounds: Bool {
        steps.contains { step in
            if case .load(let load) = step.action { return load.capturesRounds }
            return false
        }
    }

    /// The plan with `fill` applied to every text that may hold placeholders.
    public func filled(_ fill: (String) -> String) -> ServerPlan {
        var plan = self
        if case .port(let port) = readiness { plan.readiness = .port(fill(port)) }
        plan.steps = steps.map { step in
            var step = step
            switch step.action {
            case .load(var load):
                load.port = fill(load.port)
                load.path = fill(load.path)
                step.action = .load(load)
            case .command(let words): step.action = .command(words.map(fill))
            case .wait: break
            }
            return step
        }
        return plan
    }
}

/// One step of a served case.
public struct ServerStep: Sendable, Hashable, Codable {
    /// What the step does.
    public enum Action: Sendable, Hashable, Codable {
        /// Requests from the load client.
        case load(LoadRequest)
        /// Nothing for a while, nanoseconds (the server keeps running: what it does unprompted shows).
        case wait(nanoseconds: Int64)
        /// A program run to its end (its words: the executable, then its arguments), without the agent.
        case command([String])
    }

    /// Its phase's name: `phase:` as written, else the action's name (numbered from the second of a kind: `load2`).
    public var phase: String
    public var action: Action

    public init(phase: String, action: Action) {
        self.phase = phase
        self.action = action
    }

    /// True for a load step.
    public var isLoad: Bool {
        if case .load = action { return true }
        return false
    }

    /// The action's name as a scenario file writes it.
    public var kind: String {
        switch action {
        case .load: return "load"
        case .wait: return "wait"
        case .command: return "command"
        }
    }
}

/// HTTP/1.1 requests sent to 127.0.0.1 over keep-alive connections by the load client (`memharness-load`).
public struct LoadRequest: Sendable, Hashable, Codable {
    /// The port, as written (possibly a placeholder until planned).
    public var port: String
    /// `GET` or `POST`.
    public var method: String
    /// The request target, e.g. `/echo`.
    public var path: String
    /// Connections open at once, each sending its next request when the last one's answer came.
    public var connections: Int
    /// Requests in all; nil: as many as fit in `durationNanoseconds`.
    public var requests: Int?
    /// How long to send requests, nanoseconds; nil: until `requests` were answered.
    public var durationNanoseconds: Int64?
    /// The body of each POST, bytes (zeros).
    public var bodyBytes: Int
    /// Rounds measured: the load client runs once per round, the server's live bytes and allocation counts are read
    /// between rounds (per-request figures, live growth per 1,000 requests with its interval).
    public var rounds: Int
    /// Rounds run first and left out of the per-request figures (caches filling, connections' first allocations).
    public var warmupRounds: Int
    /// Heap captures between the rounds (`capture: rounds`): one once the warm-up is over (before the first round
    /// without one) and one after each measured round, each a generation of the case's heap graph; nil: none.
    public var captures: LoadCaptures?

    public init(
        port: String, method: String = "GET", path: String = "/", connections: Int = 1, requests: Int? = nil,
        durationNanoseconds: Int64? = nil, bodyBytes: Int = 0, rounds: Int = 1, warmupRounds: Int = 0
    ) {
        self.port = port
        self.method = method
        self.path = path
        self.connections = connections
        self.requests = requests
        self.durationNanoseconds = durationNanoseconds
        self.bodyBytes = bodyBytes
        self.rounds = rounds
        self.warmupRounds = warmupRounds
    }

    /// True when the step captures the heap between its rounds.
    public var capturesRounds: Bool { captures == .rounds }
}

/// When a load step captures the server's heap while it serves.
public enum LoadCaptures: String, Sendable, Hashable, Codable, CaseIterable {
    /// After the warm-up (or before the first round) and after each measured round.
    case rounds
}

/// What the load client reported for one load step.
public struct LoadFigures: Sendable, Hashable, Codable {
    /// Requests answered (any status).
    public var requests: Int
    /// Requests that failed: no answer, a broken connection, a status of 400 or more.
    public var errors: Int
    /// Bytes of the answers, headers included.
    public var bytes: Int
    /// Latency percentiles, nanoseconds.
    public var latencyP50Nanoseconds: Int64
    public var latencyP99Nanoseconds: Int64

    public init(requests: Int, errors: Int, bytes: Int, latencyP50Nanoseconds: Int64, latencyP99Nanoseconds: Int64) {
        self.requests = requests
        self.errors = errors
        self.bytes = bytes
        self.latencyP50Nanoseconds = latencyP50Nanoseconds
        self.latencyP99Nanoseconds = latencyP99Nanoseconds
    }

    /// The figures as a case's metrics, named after the step's phase: `requests`, `requestErrors`, `latencyP50`,
    /// `latencyP99` for the phase `load`; `warmupRequests`... for a phase `warmup`.
    public func metrics(phase: String) -> [Metric] {
        let name = { Self.metricName($0, phase: phase) }
        return [
            Metric(name: name("requests"), value: Double(requests), unit: .count),
            Metric(name: name("requestErrors"), value: Double(errors), unit: .count),
            Metric(name: name("latencyP50"), value: Double(latencyP50Nanoseconds) / 1e6, unit: .milliseconds),
            Metric(name: name("latencyP99"), value: Double(latencyP99Nanoseconds) / 1e6, unit: .milliseconds),
        ]
    }

    /// A step's metric: `base` for the phase `load`, the phase then `base` capitalized otherwise (`warmupRequests`).
    public static func metricName(_ base: String, phase: String) -> String {
        guard phase != "load" else { return base }
        return phase + base.prefix(1).uppercased() + base.dropFirst()
    }

    /// The figures of a step's rounds taken together: requests, errors and bytes summed, the median of the rounds'
    /// p50 latencies and the highest of their p99s; nil for no round.
    public static func combined(_ rounds: [LoadFigures]) -> LoadFigures? {
        guard let first = rounds.first else { return nil }
        guard rounds.count > 1 else { return first }
        let p50s = rounds.map(\.latencyP50Nanoseconds).sorted()
        return LoadFigures(
            requests: rounds.reduce(0) { $0 + $1.requests }, errors: rounds.reduce(0) { $0 + $1.errors },
            bytes: rounds.reduce(0) { $0 + $1.bytes }, latencyP50Nanoseconds: p50s[p50s.count / 2],
            latencyP99Nanoseconds: rounds.map(\.latencyP99Nanoseconds).max() ?? first.latencyP99Nanoseconds)
    }
}
