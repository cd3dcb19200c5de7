import Glibc
import HarnessModel
import Runner
import Scenarios
import TestSupport
import Testing
import WorkloadKit

/// Server strategies (`ready:`, `steps:`, `stop:` of a command strategy): what a good file plans, and every bad
/// setting refused with its place, the value as typed and the valid choices, before anything runs.
struct ServerScenarioTests {
    let parser = ScenarioParser(catalog: WorkloadCatalog([ExampleWorkload()]))

    /// A server scenario whose strategy is `strategy` (indented as a strategy's keys), on /bin/sh.
    static func scenario(_ strategy: String) -> String {
        """
        scenario: echo
        workload: command
        parameters:
          port: "18080"
        strategies:
          - name: buffered
            command: /bin/sh -c true
        \(strategy.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))

        """
    }

    /// The problems of `text` as the command line prints them, or nil when it parses.
    func problems(_ text: String) -> String? { MalformedScenarioTests().problems(text) }

    @Test func aServerStrategyIsPlannedWithItsReadinessStepsAndStop() throws {
        let text = Self.scenario(
            """
            ready: {port: "{port}", timeout: 3s}
            steps:
              - load: {path: /echo, connections: 4, requests: 2000}
              - wait: 500ms
              - load: {method: POST, body: 1KiB, duration: 2s, phase: warmup}
              - command: /bin/sh -c "echo {port}"
              - load: {requests: 10}
            stop: {signal: INT, grace: 2s}
            """)
        let spec = try parser.parse(text, file: "x.yaml")
        let server = try #require(spec.strategies.first?.program?.server)
        #expect(server.readiness == .port("{port}"))
        #expect(server.readyTimeoutNanoseconds == 3_000_000_000)
        #expect(server.stopSignal == SIGINT && server.graceNanoseconds == 2_000_000_000)
        #expect(server.phaseNames == ["start", "load", "wait", "warmup", "command", "load2", "stop"])
        #expect(
            server.steps[0].action
                == .load(LoadRequest(port: "{port}", path: "/echo", connections: 4, requests: 2000)))
        #expect(server.steps[1].action == .wait(nanoseconds: 500_000_000))
        #expect(
            server.steps[2].action
                == .load(
                    LoadRequest(
                        port: "{port}", method: "POST", durationNanoseconds: 2_000_000_000, bodyBytes: 1024)))
        // A server under load is sampled every 10 ms unless the command line or the file says otherwise (its exact
        // counts carry each interval's high); a program without load steps every 1 ms.
        let interval = { (options: RunOptions, spec: ScenarioSpec) in
            RunPlanner.cases(of: spec, options: options).first?.samplingIntervalNanoseconds
        }
        #expect(interval(RunOptions(), spec) == 10_000_000)
        #expect(interval(RunOptions(interval: .milliseconds(2)), spec) == 2_000_000)
        var asked = spec
        asked.interval = .microseconds(500)
        #expect(interval(RunOptions(interval: .milliseconds(2)), asked) == 500_000)
        let idle = try parser.parse(Self.scenario("ready: {port: \"{port}\"}\nsteps:\n  - wait: 1s"), file: "y.yaml")
        #expect(interval(RunOptions(), idle) == 1_000_000)
        // Placeholders are filled when the run is planned, in the port and the commands alike.
        let filled = CommandTemplate.filled(try #require(spec.strategies.first?.program), with: spec.parameters)
        #expect(filled.server?.readiness == .port("18080"))
        #expect(filled.server?.steps[3].action == .command(["/bin/sh", "-c", "\"echo", "18080\""]))
    }

    @Test func aServerReadyByALineStopsWithTermAndFiveSecondsByDefault() throws {
        let spec = try parser.parse(Self.scenario("ready: {line: listening}"), file: "x.yaml")
        let server = try #require(spec.strategies.first?.program?.server)
        #expect(server.readiness == .line("listening"))
        #expect(server.readyTimeoutNanoseconds == 10_000_000_000)
        #expect(server.stopSignal == SIGTERM && server.graceNanoseconds == 5_000_000_000)
        #expect(server.steps.isEmpty)
        // A command strategy without `ready:` runs to its own end, as before.
        let plain = try parser.parse(Self.scenario(""), file: "x.yaml")
        #expect(plain.strategies.first?.program?.server == nil)
    }

    @Test func thresholdsNameAServersPhasesAndItsLoadMetrics() throws {
        let strategy = """
            ready: {port: "{port}"}
            steps:
              - load: {requests: 10}
              - load: {requests: 10, phase: uploads}
            """
        let gated =
            Self.scenario(strategy) + """
                thresholds:
                  - buffered.metrics.requests >= 10
                  - buffered.metrics.uploadsLatencyP99 <= 50
                  - buffered.phases.uploads.peakAllocated <= 64MiB
                  - buffered.phases.stop.peakAllocated <= 64MiB

                """
        #expect(problems(gated) == nil, "\(problems(gated) ?? "")")
        let unknown = Self.scenario(strategy) + "thresholds:\n  - buffered.metrics.request >= 10\n"
        let perRequest =
            Self.scenario(strategy) + """
                thresholds:
                  - buffered.metrics.allocationsPerRequest <= 12
                  - buffered.metrics.uploadsBytesPerRequest <= 4KiB
                  - buffered.metrics.liveGrowthPer1000RequestsHigh <= 1KiB
                  - buffered.metrics.peakPerConcurrentRequest <= 64KiB
                  - buffered.metrics.uploadsAllocations <= 100000

                """
        #expect(problems(perRequest) == nil, "\(problems(perRequest) ?? "")")
        let found = try #require(problems(unknown))
        #expect(found.contains("unknown metric 'request' in 'metrics.request'"), "\(found)")
    }

    @Test func aLoadStepRunsItsWarmupThenItsMeasuredRounds() throws {
        let text = Self.scenario(
            """
            ready: {port: "{port}"}
            steps:
              - load: {requests: 1000, rounds: 5, warmup: 2}
              - load: {requests: 10}
            """)
        let server = try #require(try parser.parse(text, file: "x.yaml").strategies.first?.program?.server)
        #expect(
            server.steps[0].action == .load(LoadRequest(port: "{port}", requests: 1000, rounds: 5, warmupRounds: 2)))
        #expect(server.steps[1].action == .load(LoadRequest(port: "{port}", requests: 10, rounds: 1, warmupRounds: 0)))
        #expect(server.hasLoadSteps)
        #expect(!server.capturesRounds)
    }

    @Test func aLoadStepThatCapturesBetweenRoundsGivesItsCaseAHeapGraph() throws {
        let text = Self.scenario(
            """
            ready: {port: "{port}"}
            steps:
              - load: {requests: 500, rounds: 3, capture: rounds}
            """)
        let strategy = try #require(try parser.parse(text, file: "x.yaml").strategies.first)
        let server = try #require(strategy.program?.server)
        var load = LoadRequest(port: "{port}", requests: 500, rounds: 3)
        load.captures = .rounds
        #expect(server.steps[0].action == .load(load))
        #expect(server.capturesRounds)
    }

    @Test func thresholdsNameTheResidentSetExplainedOfAServerAndOfAProgram() throws {
        let gates =
            "thresholds:\n  - buffered.metrics.rssLiveHeap <= 64MiB\n"
            + "  - buffered.metrics.rssOtherAnonymousAtEnd <= 1MiB\n"
        for strategy in ["ready: {port: \"{port}\"}", ""] {
            let gated = Self.scenario(strategy) + gates
            #expect(problems(gated) == nil, "\(problems(gated) ?? "")")
        }
        let unknown = Self.scenario("") + "thresholds:\n  - buffered.metrics.rssLiveHeapAtExit <= 1MiB\n"
        let found = try #require(problems(unknown))
        #expect(found.contains("unknown metric 'rssLiveHeapAtExit'"), "\(found)")
    }

    static let corpus: [(name: String, strategy: String, first: String)] = [
        (
            "a port out of range", "ready: {port: 70000}",
            "x.yaml:8:19: port 70000 is out of range; allowed: 1...65535"
        ),
        ("a port that is no number", "ready: {port: http}", "x.yaml:8:19: bad port 'http'; a port is a number in"),
        (
            "a port of an unknown parameter", "ready: {port: \"{prot}\"}",
            "x.yaml:8:19: unknown parameter '{prot}' in the port; the scenario's parameters: port (did you mean 'port'?)"
        ),
        ("a bad ready timeout", "ready: {port: 80, timeout: 10x}", "x.yaml:8:32: bad value '10x' for 'timeout'"),
        (
            "a ready timeout out of range", "ready: {port: 80, timeout: 20min}",
            "x.yaml:8:32: value '20min' for 'timeout' is out of range; allowed:"
        ),
        (
            "an unknown ready key", "ready: {port: 80, tiemout: 1s}",
            "x.yaml:8:23: unknown key of 'ready' 'tiemout'; expected one of: port, line, timeout (did you mean 'timeout'?)"
        ),
        ("port and line", "ready: {port: 80, line: up}", "x.yaml:8:12: 'ready' takes 'port' or 'line', not both"),
        ("ready without either", "ready: {timeout: 1s}", "x.yaml:8:12: 'ready' needs 'port' or 'line'"),
        ("steps without ready", "steps: [wait: 1s]", "x.yaml:8:12: 'steps' is for a server: add 'ready'"),
        (
            "zero connections", "ready: {port: 80}\nsteps:\n  - load: {connections: 0, requests: 5}",
            "x.yaml:10:29: value '0' for 'load.connections' is out of range; allowed:"
        ),
        (
            "a load without an amount", "ready: {port: 80}\nsteps:\n  - load: {connections: 2}",
            "x.yaml:10:15: 'load' needs 'requests' or 'duration'"
        ),
        (
            "a load without a port", "ready: {line: up}\nsteps:\n  - load: {requests: 5}",
            "x.yaml:10:15: 'load' needs 'port' when the server is ready by a line"
        ),
        (
            "an unknown method", "ready: {port: 80}\nsteps:\n  - load: {method: PUT, requests: 5}",
            "x.yaml:10:24: unknown method 'PUT'; expected one of: GET, POST"
        ),
        (
            "a path without a slash", "ready: {port: 80}\nsteps:\n  - load: {path: echo, requests: 5}",
            "x.yaml:10:22: bad path 'echo'; a request path starts with '/'"
        ),
        (
            "an unknown load key", "ready: {port: 80}\nsteps:\n  - load: {request: 5}",
            "x.yaml:10:16: unknown key of 'load' 'request'; expected one of: port, method, path, connections, requests"
        ),
        (
            "zero rounds", "ready: {port: 80}\nsteps:\n  - load: {requests: 5, rounds: 0}",
            "x.yaml:10:37: value '0' for 'load.rounds' is out of range; allowed: 1...1000"
        ),
        (
            "rounds that are no count", "ready: {port: 80}\nsteps:\n  - load: {requests: 5, rounds: many}",
            "x.yaml:10:37: bad value 'many' for 'load.rounds'; expected a whole number"
        ),
        (
            "a negative warm-up", "ready: {port: 80}\nsteps:\n  - load: {requests: 5, warmup: -1}",
            "x.yaml:10:37: value '-1' for 'load.warmup' is out of range; allowed: 0...1000"
        ),
        (
            "an unknown capture", "ready: {port: 80}\nsteps:\n  - load: {requests: 5, capture: round}",
            "x.yaml:10:38: bad capture 'round'; valid: rounds (a heap capture after each round)"
        ),
        (
            "an unknown step", "ready: {port: 80}\nsteps:\n  - sleep: 1s",
            "x.yaml:10:9: unknown server step 'sleep'; expected one of: load, wait, command"
        ),
        ("a bad wait", "ready: {port: 80}\nsteps:\n  - wait: soon", "x.yaml:10:15: bad value 'soon' for 'wait'"),
        (
            "an unknown signal", "ready: {port: 80}\nstop: {signal: TREM}",
            "x.yaml:9:20: unknown signal 'TREM'; expected one of: TERM, INT, HUP, QUIT, USR1, USR2 (did you mean 'TERM'?)"
        ),
        ("a negative grace", "ready: {port: 80}\nstop: {grace: -1s}", "x.yaml:9:19: bad value '-1s' for 'grace'"),
        (
            "a phase of the server's own", "ready: {port: 80}\nsteps:\n  - load: {requests: 5, phase: stop}",
            "x.yaml:10:36: the phase 'stop' is the server's own"
        ),
        (
            "two steps with one phase",
            "ready: {port: 80}\nsteps:\n  - load: {requests: 5, phase: a}\n  - load: {requests: 5, phase: a}",
            "x.yaml:10:7: two steps have the phase 'a'"
        ),
        (
            "a command step's unknown placeholder", "ready: {port: 80}\nsteps:\n  - command: /bin/echo {prot}",
            "x.yaml:10:18: unknown parameter '{prot}' in the command"
        ),
    ]

    @Test(arguments: corpus.indices)
    func aBadServerSettingIsRefusedWithItsPlace(_ index: Int) throws {
        let row = Self.corpus[index]
        let found = try #require(problems(Self.scenario(row.strategy)), "\(row.name) parses")
        let first = found.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix(row.first), "\(row.name): \(found)")
    }
}
