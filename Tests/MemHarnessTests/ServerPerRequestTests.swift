import FileIO
import Foundation
import HarnessModel
import Reports
import TestSupport
import Testing
import WorkloadKit

/// Per-request figures of server load steps end to end, on `http-fixture` whose allocations per request
/// (`--allocations N`) and kept bytes per request (`--retain BYTES`) are known by construction: the agent's exact
/// counts read at each round's boundary, an allocation-count gate set from a base run, and live growth per 1,000
/// requests with its interval.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ServerPerRequestTests {
    /// Runs `arguments` on the fixture under one load step of `load`'s settings, with `thresholds` (lines of a
    /// `thresholds:` list, `{strategy}` the strategy's name); returns the run's outcome, its one case and its checks.
    /// `keys` are more keys of the strategy (`expect: leaks`); with `instrumented`, the case returned is the one that
    /// captured the heap.
    func serve(
        _ arguments: String, load: String, thresholds: [String] = [], keys: String = "", instrumented: Bool = false
    ) throws
        -> (CommandLineTests.Outcome, CaseResult, [CheckResult])
    {
        try ServerEndToEndTests.requireBuilt()
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let port = try #require(LocalPorts.free())
        let gates = thresholds.isEmpty ? "" : "thresholds:\n" + thresholds.map { "  - fixture.\($0)\n" }.joined()
        let strategy = """
            \(keys)
            ready: {port: "{port}", timeout: 10s}
            steps:
              - load: {\(load)}
              - wait: 50ms
            """
        let scenario = try trial.script(
            "server.yaml", ServerEndToEndTests.scenario(port: port, arguments, strategy, more: gates))
        let outcome = try trial.memharness(["run", scenario, "--out", trial.out])
        #expect(ServerEndToEndTests.processes(holding: "\(port)").isEmpty, "nothing outlives the run")
        let record = try ReportFolder.read(trial.out)
        let scenarios = record.report.scenarios
        let cases = instrumented ? scenarios.flatMap(\.instrumentedCases) : scenarios.flatMap(\.cases)
        try #require(cases.count == 1, "\(cases)")
        return (outcome, cases[0], record.checks)
    }

    static let rounds = "path: /, connections: 2, requests: 2000, rounds: 3, warmup: 1"

    @Test func anAllocationGateSetFromTheBaseRunFailsOnOneMoreAllocationPerRequest() throws {
        // The probe first: a server that allocates twice per request shows 2 per request (its connections' threads
        // add a few allocations per round, over 2,000 requests).
        let (_, base, _) = try serve("--allocations 2", load: Self.rounds)
        #expect(base.status == .ok, "\(base.failureText ?? "")")
        let measured = try #require(base.measurements?.metric("allocationsPerRequest")?.value)
        #expect(measured >= 2 && measured < 2.05, "allocations per request \(measured)")
        let perRequestBytes = try #require(base.measurements?.metric("bytesPerRequest")?.value)
        #expect(perRequestBytes >= 2 * 64 && perRequestBytes < 2 * 64 + 16, "bytes per request \(perRequestBytes)")
        // Every step counts its allocations: the load's are at least its requests' (2,000 x 4 rounds x 2).
        let allocations = try #require(base.measurements?.metric("allocations")?.value)
        #expect(allocations >= 16_000, "\(allocations)")
        #expect(base.measurements?.metric("waitAllocations") != nil)
        // The gate a team sets from the base run: its figure, with half an allocation of room.
        let gate = "metrics.allocationsPerRequest <= \(String(format: "%.3f", measured + 0.5))"
        let (passing, again, passed) = try serve("--allocations 2", load: Self.rounds, thresholds: [gate])
        let again1 = again.measurements?.metric("allocationsPerRequest")?.value ?? -1
        #expect(passing.status == 0, "base again (\(again1)): \(passing.stdout)\(passing.stderr)")
        #expect(passed.filter { $0.kind == .threshold }.map(\.passed) == [true], "\(passed)")
        // One allocation more per request breaks it.
        let (failing, plusOne, failed) = try serve("--allocations 3", load: Self.rounds, thresholds: [gate])
        let more = try #require(plusOne.measurements?.metric("allocationsPerRequest")?.value)
        #expect(more - measured >= 0.95 && more - measured <= 1.05, "base \(measured), +1 \(more)")
        #expect(failing.status == 2, "\(failing.stdout)\(failing.stderr)")
        let check = try #require(failed.first { $0.kind == .threshold })
        #expect(!check.passed, "\(check)")
        print("allocations per request: base \(measured), again \(again1), +1 \(more); gate \(gate)")
    }

    @Test func liveGrowthPer1000RequestsIsWhatTheServerKeepsWithItsInterval() throws {
        let retained = 4096
        let (_, result, _) = try serve(
            "--retain \(retained)", load: "path: /, connections: 2, requests: 1000, rounds: 4, warmup: 1")
        #expect(result.status == .ok, "\(result.failureText ?? "")")
        let measurements = try #require(result.measurements)
        let truth = Double(1000 * AllocatorCost.bytes(forRequest: retained))
        let growth = try #require(measurements.metric("liveGrowthPer1000Requests")?.value)
        let low = try #require(measurements.metric("liveGrowthPer1000RequestsLow")?.value)
        let high = try #require(measurements.metric("liveGrowthPer1000RequestsHigh")?.value)
        #expect(abs(growth - truth) <= truth * 0.02, "growth \(growth) per 1000 requests, kept \(truth)")
        #expect(low <= truth * 1.01 && truth * 0.99 <= high, "interval \(low)...\(high), kept \(truth)")
        let allocations = try #require(measurements.metric("allocationsPerRequest")?.value)
        #expect(allocations >= 1 && allocations < 1.05, "\(allocations)")
        let peak = try #require(measurements.metric("peakPerConcurrentRequest")?.value)
        #expect(peak > 0, "\(peak)")
        // A server that keeps nothing: its growth is a small fraction of one kept block per request.
        let (_, flat, _) = try serve(
            "--allocations 2", load: "path: /, connections: 2, requests: 1000, rounds: 4, warmup: 1")
        let flatGrowth = try #require(flat.measurements?.metric("liveGrowthPer1000Requests")?.value)
        let flatLow = flat.measurements?.metric("liveGrowthPer1000RequestsLow")?.value ?? .nan
        let flatHigh = flat.measurements?.metric("liveGrowthPer1000RequestsHigh")?.value ?? .nan
        #expect(abs(flatGrowth) < truth / 100, "growth \(flatGrowth) (\(flatLow)...\(flatHigh))")
        print(
            "growth per 1000 requests: retain \(growth) (\(low)...\(high)), kept \(truth), peak/conn \(peak); "
                + "no retain \(flatGrowth) (\(flatLow)...\(flatHigh))")
    }

    @Test func aServerThatLeaksABlockPerRequestLeaksOneBlockPerRequest() throws {
        let (outcome, result, checks) = try serve(
            "--leak 256", load: "path: /, connections: 2, requests: 500, rounds: 2, warmup: 1",
            thresholds: ["metrics.leakedBlocksPerRequest >= 0.9", "metrics.leakedBlocksPerRequest <= 1.1"],
            keys: "expect: leaks", instrumented: true)
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        // A threshold on it is checked on the case that captured the heap, where the figure is.
        #expect(checks.filter { $0.kind == .threshold }.map(\.passed) == [true, true], "\(checks)")
        let measurements = try #require(result.measurements)
        // The probe first: the capture at the server's exit sees the 1,500 blocks the requests leaked.
        let leaked = try #require(measurements.heapGraph?.leakedBlocks)
        #expect(leaked >= 1500, "\(leaked) leaked blocks")
        let perRequest = try #require(measurements.metric("leakedBlocksPerRequest")?.value)
        #expect(perRequest >= 1 && perRequest < 1.02, "\(perRequest) leaked blocks per request")
        let growth = try #require(measurements.metric("liveGrowthPer1000Requests")?.value)
        #expect(growth == Double(1000 * AllocatorCost.bytes(forRequest: 256)), "\(growth)")
        print("leaked blocks per request \(perRequest) (\(leaked) blocks), growth per 1000 requests \(growth)")
    }

    @Test func aServerThatCrashesInItsSecondRoundEndsTheStepAndNamesItsPhase() throws {
        let started = MonotonicClock.nanoseconds()
        let (_, result, _) = try serve(
            "--crash-after 1500", load: "path: /, connections: 2, requests: 1000, rounds: 5, warmup: 1")
        #expect(result.status == .crashed)
        let failure = result.failureText ?? ""
        #expect(failure.contains("SIGSEGV") && failure.contains("during phase 'load'"), "\(failure)")
        // No round runs after the crash, and a step cut short has no per-request figures.
        #expect(result.measurements?.metric("allocationsPerRequest") == nil)
        let elapsed = MonotonicClock.nanoseconds() - started
        #expect(elapsed < 20_000_000_000, "\(elapsed) ns")
    }
}
