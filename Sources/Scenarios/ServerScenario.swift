import Foundation
import Glibc
import HarnessModel
import WorkloadKit
import Yams

/// Command strategies that serve: `ready:` (a port accepting or a line of output, within a timeout), `steps:` run
/// while the program serves (`load`, `wait`, `command`), and `stop:` (a signal, a grace period, then SIGKILL of its
/// process group).
///
/// ```yaml
/// strategies:
///   - name: buffered
///     command: ./bin/server --port {port}
///     ready: {port: "{port}", timeout: 10s}        # or ready: {line: listening, timeout: 10s}
///     steps:
///       - load: {path: /echo, connections: 4, requests: 2000}
///       - load: {path: /echo, requests: 1000, rounds: 5, warmup: 1, phase: rounds}
///       - load: {path: /echo, requests: 500, rounds: 3, capture: rounds}  # the heap after the warm-up and each round
///       - wait: 500ms
///       - command: ./bin/poke {port}
///     stop: {signal: TERM, grace: 5s}
/// ```
enum ServerScenario {
    /// The strategy keys that make a command strategy a server's.
    static let strategyKeys = ["ready", "steps", "stop"]
    static let readyKeys = ["port", "line", "timeout"]
    static let stopKeys = ["signal", "grace"]
    static let stepKinds = ["load", "wait", "command"]
    static let loadKeys = [
        "port", "method", "path", "connections", "requests", "duration", "body", "rounds", "warmup", "phase", "capture",
    ]
    static let methods = ["GET", "POST"]
    /// The signals `stop:` may send, by the name a scenario file writes.
    static let signals: [(name: String, number: Int32)] = [
        ("TERM", SIGTERM), ("INT", SIGINT), ("HUP", SIGHUP), ("QUIT", SIGQUIT), ("USR1", SIGUSR1), ("USR2", SIGUSR2),
    ]

    /// The settings' ranges.
    static let ports = 1...65_535
    static let connections = 1...1_024
    static let requests = 1...100_000_000
    static let rounds = 1...1_000
    static let warmupRounds = 0...1_000
    static let readyTimeout: ClosedRange<Duration> = .milliseconds(100) ... .seconds(600)
    static let grace: ClosedRange<Duration> = .zero ... .seconds(600)
    static let wait: ClosedRange<Duration> = .zero ... .seconds(3600)
    static let loadDuration: ClosedRange<Duration> = .milliseconds(1) ... .seconds(3600)
    static let bodyBytes = 0...(64 << 20)
    static let defaultReadyTimeout = Duration.seconds(10)
    static let defaultGrace = Duration.seconds(5)
}

extension ServerPlan {
    /// The phases of the servers among `strategies`, each once, for thresholds (`phases.load.peakAllocated`).
    static func phaseNames(of strategies: [StrategyPlan]) -> [String] {
        var names: [String] = []
        for name in strategies.compactMap(\.program?.server).flatMap(\.phaseNames) where !names.contains(name) {
            names.append(name)
        }
        return names
    }

    /// The metrics the steps of the servers among `strategies` give, each once, for thresholds (`metrics.requests`,
    /// `metrics.allocationsPerRequest`): a load step's figures and per-request figures, and, in a server with a load
    /// step (whose agent counts exactly), every step's allocations.
    static func metricDescriptors(of strategies: [StrategyPlan]) -> [MetricDescriptor] {
        var descriptors: [MetricDescriptor] = []
        func add(_ name: String, _ unit: Metric.Unit, _ summary: String) {
            guard !descriptors.contains(where: { $0.name == name }) else { return }
            descriptors.append(MetricDescriptor(name, unit, summary))
        }
        for plan in strategies.compactMap(\.program?.server) where plan.hasLoadSteps {
            add(
                ServerPlan.leakedBlocksPerRequest, .count,
                "blocks no root reaches at the server's exit per request (a case that captures the heap)")
            if plan.capturesRounds {
                add(
                    ServerPlan.heapCapturePause, .milliseconds,
                    "how long a heap capture between load rounds kept the server stopped, naming included (median)")
                add(ServerPlan.heapCaptureBytes, .bytes, "the bytes a heap capture between load rounds wrote (median)")
            }
            for step in plan.steps {
                if case .load = step.action {
                    let figures = LoadFigures(
                        requests: 0, errors: 0, bytes: 0, latencyP50Nanoseconds: 0, latencyP99Nanoseconds: 0)
                    for metric in figures.metrics(phase: step.phase) {
                        add(metric.name, metric.unit, "a figure of the load step '\(step.phase)'")
                    }
                    for metric in PerRequestFigures.descriptions {
                        add(
                            LoadFigures.metricName(metric.name, phase: step.phase), metric.unit,
                            "\(metric.summary), in the load step '\(step.phase)'")
                    }
                }
                if case .load(let load) = step.action, load.capturesRounds {
                    add(
                        LoadFigures.metricName(ServerPlan.capturedLiveGrowthPer1000Requests, phase: step.phase), .bytes,
                        "the slope of the heap captures' live bytes (reachable or not) over the requests, per 1,000, "
                            + "in the load step '\(step.phase)'")
                }
                for metric in ServerStep.allocationMetricDescriptions {
                    add(
                        LoadFigures.metricName(metric.name, phase: step.phase), metric.unit,
                        "\(metric.summary) '\(step.phase)'")
                }
            }
        }
        return descriptors
    }
}

extension ParseContext {
    /// The server plan of a command strategy that has `ready:`; nil (nothing reported) for one that runs to its end.
    /// `parameters` are the strategy's: a port written as a placeholder is checked with its value.
    mutating func readServer(_ mapping: Node.Mapping, parameters: ParameterValues) -> ServerPlan? {
        guard let readyNode = mapping["ready"] else {
            for key in ["steps", "stop"] where mapping[key] != nil {
                report(
                    mapping[key],
                    "'\(key)' is for a server: add 'ready', e.g. ready: {port: \"{port}\", timeout: 10s}")
            }
            return nil
        }
        let ready = readReadiness(readyNode, parameters: parameters)
        var steps: [ServerStep] = []
        if let stepsNode = mapping["steps"] {
            if let sequence = stepsNode.sequence {
                steps = sequence.compactMap {
                    readServerStep(
                        $0, parameters: parameters, ready: ready?.readiness, directory: mapping["directory"]?.string)
                }
            } else {
                report(stepsNode, "a server's 'steps' are a list of load, wait and command steps")
            }
        }
        steps = Self.numbered(steps)
        for name in Set(steps.map(\.phase)) where steps.filter({ $0.phase == name }).count > 1 {
            report(mapping["steps"], "two steps have the phase '\(name)'; give each its own 'phase'")
        }
        let stop = mapping["stop"].map { readStop($0) } ?? (SIGTERM, ServerScenario.defaultGrace)
        guard let ready, let stopSignal = stop.0, let grace = stop.1 else { return nil }
        return ServerPlan(
            readiness: ready.readiness, readyTimeoutNanoseconds: ready.timeout.nanoseconds, steps: steps,
            stopSignal: stopSignal, graceNanoseconds: grace.nanoseconds)
    }

    /// `ready: {port: P, timeout: T}` or `ready: {line: TEXT, timeout: T}`.
    private mutating func readReadiness(
        _ node: Node, parameters: ParameterValues
    ) -> (readiness: ServerPlan.Readiness, timeout: Duration)? {
        let example = "e.g. ready: {port: \"{port}\", timeout: 10s} or ready: {line: listening, timeout: 10s}"
        guard let mapping = node.mapping else {
            report(node, "'ready' is a mapping with 'port' or 'line', and 'timeout'; \(example)")
            return nil
        }
        checkKeys(mapping, allowed: ServerScenario.readyKeys, what: "key of 'ready'")
        let timeout = readDuration(mapping, "timeout", range: ServerScenario.readyTimeout)
        if mapping["timeout"] != nil && timeout == nil { return nil }
        switch (mapping["port"], mapping["line"]) {
        case (let portNode?, nil):
            guard let port = readPort(portNode, parameters: parameters) else { return nil }
            return (.port(port), timeout ?? ServerScenario.defaultReadyTimeout)
        case (nil, let lineNode?):
            guard let line = string(lineNode, "line"), !line.isEmpty else {
                report(lineNode, "'line' is the text the server prints when it is ready, e.g. line: listening")
                return nil
            }
            return (.line(line), timeout ?? ServerScenario.defaultReadyTimeout)
        case (_?, _?):
            report(node, "'ready' takes 'port' or 'line', not both")
        case (nil, nil):
            report(node, "'ready' needs 'port' or 'line'; \(example)")
        }
        return nil
    }

    /// A port: a number in 1...65535, or a placeholder of a parameter whose value is one.
    private mutating func readPort(_ node: Node, parameters: ParameterValues) -> String? {
        guard let text = string(node, "port") else { return nil }
        let placeholders = CommandTemplate.placeholders(in: text)
        for name in placeholders where parameters[name] == nil {
            let names = parameters.values.keys.sorted()
            report(
                node,
                "unknown parameter '{\(name)}' in the port; the scenario's parameters: "
                    + (names.isEmpty ? "none (declare them under 'parameters')" : names.joined(separator: ", "))
                    + suggestion(name, names))
            return nil
        }
        let value = placeholders.reduce(text) { text, name in
            text.replacingOccurrences(of: "{\(name)}", with: parameters[name].map(CommandTemplate.text) ?? "")
        }
        guard let number = Int(value) else {
            report(node, "bad port '\(value)'; a port is a number in \(OptionRanges.text(ServerScenario.ports))")
            return nil
        }
        if let problem = OptionRanges.problem(number, in: ServerScenario.ports, written: value) {
            report(node, "port \(problem)")
            return nil
        }
        return text
    }

    /// `stop: {signal: TERM, grace: 5s}`: the signal (nil when bad) and the grace (nil when bad).
    private mutating func readStop(_ node: Node) -> (Int32?, Duration?) {
        guard let mapping = node.mapping else {
            report(node, "'stop' is a mapping with 'signal' and 'grace', e.g. stop: {signal: TERM, grace: 5s}")
            return (nil, nil)
        }
        checkKeys(mapping, allowed: ServerScenario.stopKeys, what: "key of 'stop'")
        var signal: Int32? = SIGTERM
        if let signalNode = mapping["signal"], let text = string(signalNode, "signal") {
            let names = ServerScenario.signals.map(\.name)
            let bare = text.hasPrefix("SIG") ? String(text.dropFirst(3)) : text
            signal = ServerScenario.signals.first { $0.name == bare }?.number
            if signal == nil {
                report(
                    signalNode,
                    "unknown signal '\(text)'; expected one of: \(names.joined(separator: ", "))"
                        + suggestion(bare, names))
            }
        }
        let grace = readDuration(mapping, "grace", range: ServerScenario.grace)
        return (signal, mapping["grace"] != nil && grace == nil ? nil : grace ?? ServerScenario.defaultGrace)
    }

    /// One step: `load: {...}`, `wait: 500ms` or `command: WORDS`.
    private mutating func readServerStep(
        _ node: Node, parameters: ParameterValues, ready: ServerPlan.Readiness?, directory: String?
    ) -> ServerStep? {
        let kinds = ServerScenario.stepKinds
        guard let mapping = node.mapping, mapping.count == 1,
            let (key, value) = mapping.first.map({ ($0.key, $0.value) }),
            let kind = key.string
        else {
            report(node, "a server step is 'load: {...}', 'wait: 500ms' or 'command: ./bin/tool'")
            return nil
        }
        switch kind {
        case "load":
            return readLoad(value, parameters: parameters, ready: ready)
        case "wait":
            guard let duration = readDuration(mapping, "wait", range: ServerScenario.wait) else { return nil }
            return ServerStep(phase: "", action: .wait(nanoseconds: duration.nanoseconds))
        case "command":
            guard let words = readWords(value, parameters: parameters, directory: directory) else { return nil }
            return ServerStep(phase: "", action: .command(words))
        default:
            report(
                key,
                "unknown server step '\(kind)'; expected one of: \(kinds.joined(separator: ", "))"
                    + suggestion(kind, kinds))
            return nil
        }
    }

    /// A step's command: a string split on spaces or a list of words; its program is found as `command:`'s is (in
    /// the strategy's `directory`, where it also runs).
    private mutating func readWords(_ node: Node, parameters: ParameterValues, directory: String?) -> [String]? {
        let words: [String] =
            node.sequence?.compactMap(\.string)
            ?? (node.string ?? "").split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard !words.isEmpty else {
            report(node, "a 'command' step is a command line, e.g. command: ./bin/poke {port}")
            return nil
        }
        guard checkPlaceholders(words, at: node, parameters: parameters.values.keys.sorted()) else { return nil }
        do {
            // It runs without the agent: any executable will do (a static one too).
            let program = try ProgramCheck.locate(
                words[0], workingDirectory: directory, path: ProcessInfo.processInfo.environment["PATH"])
            return [program] + words.dropFirst()
        } catch {
            report(node, error.description)
            return nil
        }
    }
}

extension ParseContext {
    /// `load: {path: /echo, connections: 4, requests: 2000}` (or `duration:` instead of, or besides, `requests:`).
    fileprivate mutating func readLoad(
        _ node: Node, parameters: ParameterValues, ready: ServerPlan.Readiness?
    ) -> ServerStep? {
        guard let mapping = node.mapping else {
            report(node, "'load' is a mapping, e.g. load: {path: /echo, connections: 4, requests: 2000}")
            return nil
        }
        checkKeys(mapping, allowed: ServerScenario.loadKeys, what: "key of 'load'")
        var load = LoadRequest(port: "")
        var valid = true
        if let portNode = mapping["port"] {
            guard let port = readPort(portNode, parameters: parameters) else { return nil }
            load.port = port
        } else if case .port(let port) = ready {
            load.port = port
        } else {
            report(node, "'load' needs 'port' when the server is ready by a line, e.g. port: \"{port}\"")
            valid = false
        }
        if let methodNode = mapping["method"], let method = string(methodNode, "method") {
            if ServerScenario.methods.contains(method) {
                load.method = method
            } else {
                let methods = ServerScenario.methods
                report(
                    methodNode,
                    "unknown method '\(method)'; expected one of: \(methods.joined(separator: ", "))"
                        + suggestion(method.uppercased(), methods))
                valid = false
            }
        }
        if let pathNode = mapping["path"], let path = string(pathNode, "path") {
            if path.hasPrefix("/") && !path.contains(" ") {
                load.path = path
            } else {
                report(pathNode, "bad path '\(path)'; a request path starts with '/' and has no spaces, e.g. /echo")
                valid = false
            }
        }
        valid = readLoadAmounts(mapping, node: node, into: &load) && valid
        let phase = mapping["phase"].flatMap { readPhaseLabel($0) }
        if mapping["phase"] != nil && phase == nil { valid = false }
        if let captureNode = mapping["capture"], let text = string(captureNode, "capture") {
            if let captures = LoadCaptures(rawValue: text) {
                load.captures = captures
            } else {
                let choices = LoadCaptures.allCases.map(\.rawValue).joined(separator: ", ")
                report(captureNode, "bad capture '\(text)'; valid: \(choices) (a heap capture after each round)")
                valid = false
            }
        }
        guard valid else { return nil }
        return ServerStep(phase: phase ?? "", action: .load(load))
    }

    /// `connections:`, `requests:`, `duration:`, `rounds:`, `warmup:` and `body:`; false when one of them is bad
    /// (reported).
    private mutating func readLoadAmounts(_ mapping: Node.Mapping, node: Node, into load: inout LoadRequest) -> Bool {
        var valid = true
        if let value = readCount(mapping, "connections", range: ServerScenario.connections) {
            load.connections = value
        } else if mapping["connections"] != nil {
            valid = false
        }
        load.requests = readCount(mapping, "requests", range: ServerScenario.requests)
        if mapping["requests"] != nil && load.requests == nil { valid = false }
        load.durationNanoseconds = readDuration(mapping, "duration", range: ServerScenario.loadDuration)?.nanoseconds
        if mapping["duration"] != nil && load.durationNanoseconds == nil { valid = false }
        if valid && load.requests == nil && load.durationNanoseconds == nil {
            report(node, "'load' needs 'requests' or 'duration' (or both: whichever comes first ends it)")
            valid = false
        }
        for (key, range) in [("rounds", ServerScenario.rounds), ("warmup", ServerScenario.warmupRounds)] {
            guard mapping[key] != nil else { continue }
            if let value = readCount(mapping, key, range: range) {
                if key == "rounds" { load.rounds = value } else { load.warmupRounds = value }
            } else {
                valid = false
            }
        }
        if let bodyNode = mapping["body"], let text = string(bodyNode, "body") {
            let spec = ParameterSpec.bytes("body", default: 0, range: ServerScenario.bodyBytes, "")
            switch spec.parse(text) {
            case .success(.bytes(let bytes)): load.bodyBytes = bytes
            case .failure(let failure):
                report(bodyNode, failure.message(text: text, name: "load.body"))
                valid = false
            default: break
            }
        }
        return valid
    }

    /// A count setting in `range`; nil when absent or bad (reported).
    private mutating func readCount(_ mapping: Node.Mapping, _ key: String, range: ClosedRange<Int>) -> Int? {
        guard let node = mapping[key], let text = string(node, key) else { return nil }
        let spec = ParameterSpec.count(key, default: range.lowerBound, range: range, "")
        switch spec.parse(text) {
        case .success(.count(let value)): return value
        case .failure(let failure): report(node, failure.message(text: text, name: "load.\(key)"))
        default: break
        }
        return nil
    }

    /// A step's phase label: a word of letters and digits that starts with a lowercase letter (it names the step's
    /// metrics too: `warmupRequests`).
    private mutating func readPhaseLabel(_ node: Node) -> String? {
        guard let text = string(node, "phase") else { return nil }
        guard let first = text.first, first.isLowercase, first.isASCII,
            text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else {
            report(node, "bad phase '\(text)'; a phase is a word of letters and digits from a lowercase letter: warmup")
            return nil
        }
        guard ![ServerPlan.startPhase, ServerPlan.stopPhase].contains(text) else {
            report(node, "the phase '\(text)' is the server's own; name the step otherwise")
            return nil
        }
        return text
    }
}

extension ParseContext {
    /// Steps without a phase label named after their kind, numbered from the second of a kind: load, wait, load2.
    static func numbered(_ steps: [ServerStep]) -> [ServerStep] {
        var seen: [String: Int] = [:]
        return steps.map { step in
            guard step.phase.isEmpty else { return step }
            let count = (seen[step.kind] ?? 0) + 1
            seen[step.kind] = count
            return ServerStep(phase: count == 1 ? step.kind : "\(step.kind)\(count)", action: step.action)
        }
    }
}
