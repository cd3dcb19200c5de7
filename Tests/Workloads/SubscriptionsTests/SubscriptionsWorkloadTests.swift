import AllocatorProbe
import Foundation
import Measurement
import Runner
import Scenarios
import WorkloadKit
import HarnessModel
import SubscriptionsWorkload
import TestSupport
import Testing

/// Runs the subscriptions workload in-process through the harness, the way a child process would.
enum Harness {
    static let catalog = WorkloadCatalog([SubscriptionsWorkload()])

    /// Runs `strategy` once: `iterations` screens presented, updated and dismissed.
    static func run(_ strategy: String, expect: LeakExpectation, iterations: Int, warmup: Int = 3) throws -> CaseResult {
        let yaml = """
        scenario: subscriptions-test
        workload: subscriptions
        parameters: {payloadSize: 64KiB}
        strategies: [{name: \(strategy), expect: \(expect.rawValue)}]
        steps:
          - repeat: {times: \(iterations), warmup: \(warmup), settle: 1ms, steps: [present, publish, dismiss]}
        interval: 1ms
        settle: 20ms
        """
        let scenario = try ScenarioParser(catalog: catalog).parse(yaml, file: "subscriptions-test.yaml")
        let spec = try #require(RunPlanner.cases(of: scenario, options: RunOptions(repetitions: 1)).first)
        let result = try CaseExecutor(catalog: catalog).result(spec, scratchDirectory: "/tmp")
        #expect(result.status == .ok, "\(result.failure ?? "")")
        return result
    }

    /// Live heap now: `stats.allocated` minus the thread caches, after flushing this thread's cache.
    static func liveHeapBytes(_ probe: JemallocProbe) -> Int {
        probe.flushThreadCache()
        let allocated = probe.allocatedBytes()
        return allocated - probe.threadCacheBytes()
    }

    /// Bytes one screen and its subscription keep alive, measured with the allocator around
    /// presenting screens of `strategy` (after three presents so first-use growth is over).
    static func bytesRetainedByOneScreen(_ strategy: String) throws -> Double {
        let probe = try JemallocProbe()
        let workload = SubscriptionsWorkload()
        let context = CaseContext(strategy: strategy, gaugeNames: workload.descriptor.gauges.map(\.name))
        let parameters = ParameterValues(["payloadSize": .bytes(64 * 1024)])
        let workloadCase = try workload.makeCase(strategy: strategy, parameters: parameters, context: context)
        try workloadCase.setUp(context: context)
        let present = StepInvocation(name: "present", phase: "present", arguments: ParameterValues())
        for _ in 0..<3 { try workloadCase.run(present, context: context) }
        let measured = 4
        let before = liveHeapBytes(probe)
        for _ in 0..<measured { try workloadCase.run(present, context: context) }
        let after = liveHeapBytes(probe)
        try workloadCase.tearDown(context: context)
        return Double(after - before) / Double(measured)
    }

    /// The probes the leak tests rely on must see what is really alive: a tracked object held
    /// alive is a survivor (and is not once released), and a retained block raises the live heap.
    static func proveProbesSeeALiveObject() throws {
        final class Keeper {
            let bytes = [UInt8](repeating: 1, count: 64 * 1024)
        }
        let context = CaseContext(strategy: "probe", gaugeNames: [])
        let probe = try JemallocProbe()
        let before = liveHeapBytes(probe)
        var keeper: Keeper? = Keeper()
        if let keeper { context.track(keeper, as: "Keeper") }
        #expect(liveHeapBytes(probe) - before >= 64 * 1024, "the live heap must show a retained 64 KiB block")
        #expect(context.lifetimes.survivors() == [TypeCount(typeName: "Keeper", count: 1)], "the tracker must see a live object")
        keeper = nil
        #expect(context.lifetimes.survivors().isEmpty, "the tracker must see the object die")
    }
}

@Suite(.serialized) struct SubscriptionLeakDetectionTests {
    @Test(arguments: ["strong-self-capture", "assign-to-self"], [6, 20, 50])
    func everyScreenOfACycleLeaksInCountAndBytes(strategy: String, iterations: Int) throws {
        try Harness.proveProbesSeeALiveObject()
        let truth = try Harness.bytesRetainedByOneScreen(strategy)
        #expect(truth > 64 * 1024, "a screen holds at least its payload")

        let result = try Harness.run(strategy, expect: .leaks, iterations: iterations)
        let leaks = try #require(result.completed?.leaks)
        #expect(leaks.survivors == [TypeCount(typeName: SubscriptionsWorkload.trackedScreenType, count: iterations)])
        let fit = try #require(leaks.growth.first?.fit)
        #expect(abs(fit.slopeBytesPerIteration - truth) <= 0.10 * truth,
                "slope \(fit.slopeBytesPerIteration) B per iteration vs \(truth) B retained by one screen")
        #expect(LeakAnalysis.isGrowing(fit))
        let assessment = result.leakAssessment
        #expect(assessment.verdict == .leaks)
        #expect(assessment.outcome == .asExpected)
        #expect(!assessment.isFinding)
        // Leaked screens keep receiving updates: screen i sees publishes i...N.
        #expect(result.metric("updatesRendered")?.value == Double(iterations * (iterations + 1) / 2))
        #expect(result.metric("screensAliveAfterTeardown")?.value == Double(iterations))
    }

    @Test(arguments: ["weak-self", "cancel-on-teardown", "finite-publisher"])
    func cleanStrategiesLeaveNoScreenAndNoGrowth(strategy: String) throws {
        try Harness.proveProbesSeeALiveObject()
        let result = try Harness.run(strategy, expect: .leakFree, iterations: 20)
        let leaks = try #require(result.completed?.leaks)
        #expect(leaks.tracked == [TypeCount(typeName: SubscriptionsWorkload.trackedScreenType, count: 20)], "the tracker saw every screen")
        #expect(leaks.survivors.isEmpty)
        let fit = try #require(leaks.growth.first?.fit)
        #expect(!LeakAnalysis.isGrowing(fit), "slope \(fit.slopeBytesPerIteration) ± \(fit.boundBytesPerIteration) B per iteration")
        #expect(result.leakAssessment.verdict == .leakFree)
        #expect(result.leakAssessment.outcome == .asExpected)
        #expect(result.metric("updatesRendered")?.value == 20, "each screen rendered its one update, then went")
        #expect(result.metric("screensAliveAfterTeardown")?.value == 0)
    }

    @Test func warmUpAllocationsAreNoLeakOverThreeRepeatedRuns() throws {
        try Harness.proveProbesSeeALiveObject()
        for run in 1...3 {
            let result = try Harness.run("finite-publisher", expect: .leakFree, iterations: 20)
            let leaks = try #require(result.completed?.leaks)
            #expect(leaks.survivors.isEmpty, "run \(run)")
            let series = try #require(leaks.growth.first)
            let fit = try #require(series.fit)
            #expect(!LeakAnalysis.isGrowing(fit), "run \(run): slope \(fit.slopeBytesPerIteration) ± \(fit.boundBytesPerIteration)")
            #expect(result.leakAssessment.verdict == .leakFree, "run \(run): \(result.leakAssessment.reasons)")
        }
    }

    @Test func anUnexpectedLeakIsAFinding() throws {
        let result = try Harness.run("strong-self-capture", expect: .leakFree, iterations: 6)
        #expect(result.expectation == .leakFree)
        #expect(result.leakAssessment.outcome == .unexpectedLeak)
        #expect(result.leakAssessment.isFinding)
    }
}

@Suite struct SubscriptionsScenarioTests {
    @Test func theShippedScenarioStatesAnExpectationForEveryStrategy() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Scenarios/subscriptions.yaml").standardized.path
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let scenario = try ScenarioParser(catalog: Harness.catalog).parse(text, file: file)
        #expect(scenario.strategies.map(\.name) == SubscriptionStrategy.allCases.map(\.rawValue))
        let expected: [String: String] = [
            "strong-self-capture": "leaks", "weak-self": "leak-free", "cancel-on-teardown": "leak-free",
            "finite-publisher": "leak-free", "assign-to-self": "leaks",
        ]
        for strategy in scenario.strategies {
            #expect(strategy.expect == expected[strategy.name], "\(strategy.name)")
        }
        #expect(scenario.steps.first?.name == "repeat")
        #expect(scenario.steps.first?.body?.map(\.name) == ["present", "publish", "dismiss"])
    }

    @Test func anUnknownStrategyNamesTheValidOnes() {
        let context = CaseContext(strategy: "strong", gaugeNames: [])
        #expect {
            _ = try SubscriptionsWorkload().makeCase(strategy: "strong", parameters: ParameterValues(), context: context)
        } throws: { error in
            "\(error)" == "subscriptions: unknown strategy 'strong'; expected one of: strong-self-capture, weak-self, "
                + "cancel-on-teardown, finite-publisher, assign-to-self"
        }
    }
}
