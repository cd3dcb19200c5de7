import AllocatorProbe
import Foundation
import HarnessModel
import Measurement
import OpenCombine
import Runner
import Scenarios
import TestSupport
import Testing
import Verdicts
import WorkloadKit

@testable import SubscriptionsWorkload

/// Runs the subscriptions workload in-process through the harness, the way a child process would.
enum Harness {
    static let catalog = WorkloadCatalog([SubscriptionsWorkload()])

    /// Runs `strategy` once: `iterations` screens presented, updated and dismissed.
    static func run(_ strategy: String, expect: LeakExpectation, iterations: Int, warmup: Int = 3) throws -> CaseResult
    {
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
        #expect(result.status == .ok, "\(String(describing: result.failure))")
        expectMetrics(result.completed?.metrics ?? [], declaredBy: SubscriptionsWorkload().descriptor, complete: true)
        return result
    }

    /// Live heap now: `stats.allocated` minus the thread caches, after flushing this thread's cache.
    static func liveHeapBytes(_ probe: JemallocProbe) -> Int {
        probe.flushThreadCache()
        return probe.liveBytes()
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
        #expect(
            context.lifetimes.survivors() == [TypeCount(typeName: "Keeper", count: 1)],
            "the tracker must see a live object")
        keeper = nil
        #expect(context.lifetimes.survivors().isEmpty, "the tracker must see the object die")
    }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct SubscriptionLeakDetectionTests {
    /// `count` screens and `count` subscribers, as the tracker reports them.
    static func screenAndSubscriber(_ count: Int) -> [TypeCount] {
        [
            TypeCount(typeName: SubscriptionsWorkload.trackedScreenType, count: count),
            TypeCount(typeName: SubscriptionsWorkload.trackedSubscriberType, count: count),
        ]
    }

    @Test(
        arguments: ["strong-self-capture", "assign-to-self", "implicit-infinite", "self-derived-strong"], [6, 20, 50])
    func everyScreenOfACycleLeaksInCountAndBytes(strategy: String, iterations: Int) throws {
        try Harness.proveProbesSeeALiveObject()
        let truth = try Harness.bytesRetainedByOneScreen(strategy)
        #expect(truth > 64 * 1024, "a screen holds at least its payload")

        let result = try Harness.run(strategy, expect: .leaks, iterations: iterations)
        let leaks = try #require(result.completed?.leaks)
        #expect(leaks.survivors == Self.screenAndSubscriber(iterations), "every screen and its subscriber")
        let fit = try #require(leaks.growth.first?.fit)
        #expect(
            abs(fit.slopeBytesPerIteration - truth) <= 0.10 * truth,
            "slope \(fit.slopeBytesPerIteration) B per iteration vs \(truth) B retained by one screen")
        #expect(LeakCriteria.standard.isGrowing(fit))
        let assessment = result.leakJudgement
        #expect(assessment.verdict == .leaks)
        #expect(assessment.outcome == .asExpected)
        #expect(!assessment.isFinding)
        #expect(result.metric("screensAliveAfterTeardown")?.value == Double(iterations))
        #expect(result.metric("subscribersAliveAfterTeardown")?.value == Double(iterations))
        if strategy == "self-derived-strong" {
            // Its publisher is the screen's own property: nobody sets it once the screen is gone.
            // Each screen checked its name on subscription and at its one publish.
            #expect(result.metric("updatesRendered")?.value == Double(2 * iterations))
            #expect(result.metric("deliveriesAfterDismiss")?.value == 0)
        } else {
            // Leaked screens keep receiving the store's updates: screen i sees publishes i...N,
            // N - i of them after its dismissal.
            #expect(result.metric("updatesRendered")?.value == Double(iterations * (iterations + 1) / 2))
            #expect(result.metric("deliveriesAfterDismiss")?.value == Double(iterations * (iterations - 1) / 2))
        }
    }

    @Test(arguments: ["weak-self", "finite-publisher", "implicit-finite", "disposed", "self-derived-weak"])
    func cleanStrategiesLeaveNoScreenAndNoGrowth(strategy: String) throws {
        try Harness.proveProbesSeeALiveObject()
        let result = try Harness.run(strategy, expect: .leakFree, iterations: 20)
        let leaks = try #require(result.completed?.leaks)
        #expect(leaks.tracked == Self.screenAndSubscriber(20), "the tracker saw every screen and subscriber")
        #expect(leaks.survivors.isEmpty)
        let fit = try #require(leaks.growth.first?.fit)
        #expect(
            !LeakCriteria.standard.isGrowing(fit),
            "slope \(fit.slopeBytesPerIteration) ± \(fit.boundBytesPerIteration) B per iteration")
        #expect(result.leakJudgement.verdict == .leakFree)
        #expect(result.leakJudgement.outcome == .asExpected)
        // Each screen rendered its one update (and a self-derived one its name on subscription too), then went.
        #expect(result.metric("updatesRendered")?.value == (strategy == "self-derived-weak" ? 40 : 20))
        #expect(result.metric("deliveriesAfterDismiss")?.value == 0)
        #expect(result.metric("screensAliveAfterTeardown")?.value == 0)
        #expect(result.metric("subscribersAliveAfterTeardown")?.value == 0)
    }

    @Test func warmUpAllocationsAreNoLeakOverThreeRepeatedRuns() throws {
        try Harness.proveProbesSeeALiveObject()
        for run in 1...3 {
            let result = try Harness.run("finite-publisher", expect: .leakFree, iterations: 20)
            let leaks = try #require(result.completed?.leaks)
            #expect(leaks.survivors.isEmpty, "run \(run)")
            let series = try #require(leaks.growth.first)
            let fit = try #require(series.fit)
            #expect(
                !LeakCriteria.standard.isGrowing(fit),
                "run \(run): slope \(fit.slopeBytesPerIteration) ± \(fit.boundBytesPerIteration)")
            #expect(result.leakJudgement.verdict == .leakFree, "run \(run): \(result.leakJudgement.reasons)")
        }
    }

    @Test func anUnexpectedLeakIsAFinding() throws {
        let result = try Harness.run("strong-self-capture", expect: .leakFree, iterations: 6)
        #expect(result.expectation == .leakFree)
        #expect(result.leakJudgement.outcome == .unexpectedLeak)
        #expect(result.leakJudgement.isFinding)
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
            "implicit-finite": "leak-free", "implicit-infinite": "leaks", "disposed": "leak-free",
            "self-derived-strong": "leaks", "self-derived-weak": "leak-free",
            "strong-self-capture": "leaks", "weak-self": "leak-free", "finite-publisher": "leak-free",
            "assign-to-self": "leaks",
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
            _ = try SubscriptionsWorkload().makeCase(
                strategy: "strong", parameters: ParameterValues(), context: context)
        } throws: { error in
            "\(error)"
                == "subscriptions: unknown strategy 'strong'; expected one of: implicit-finite, implicit-infinite, "
                + "disposed, self-derived-strong, self-derived-weak, strong-self-capture, weak-self, "
                + "finite-publisher, assign-to-self"
        }
    }
}

/// The lifetimes of seed 003, step by step on one case: what lives after dismissal, and what it still receives.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SubscriptionLifetimeTests {
    /// A set-up case driven step by step.
    struct Screens {
        let context: CaseContext
        let workloadCase: any WorkloadCase

        init(_ strategy: SubscriptionStrategy) throws {
            let workload = SubscriptionsWorkload()
            context = CaseContext(strategy: strategy.rawValue, gaugeNames: workload.descriptor.gauges.map(\.name))
            workloadCase = try workload.makeCase(
                strategy: strategy.rawValue, parameters: ParameterValues(["payloadSize": .bytes(1024)]),
                context: context)
            try workloadCase.setUp(context: context)
        }

        func run(_ steps: String...) throws {
            for step in steps {
                let arguments = step == "publish" ? ParameterValues(["count": .count(1)]) : ParameterValues()
                try workloadCase.run(StepInvocation(name: step, phase: step, arguments: arguments), context: context)
            }
        }

        func gauge(_ name: String) -> Int64 { context.gauge(name).value }

        func metric(_ name: String) -> Double? { workloadCase.metrics().first { $0.name == name }?.value }
    }

    @Test func implicitInfiniteStillReceivesAfterDismissal() throws {
        let screens = try Screens(.implicitInfinite)
        try screens.run("present", "publish", "dismiss")
        // Nothing stores the subscription, yet it is alive: the store's updates retain the subscriber,
        // and the subscriber the screen its block captured.
        #expect(screens.gauge("liveScreens") == 1)
        #expect(screens.gauge("liveSubscribers") == 1)
        #expect(screens.gauge("deliveriesAfterDismiss") == 0)
        try screens.run("publish", "publish", "publish")
        #expect(screens.gauge("deliveriesAfterDismiss") == 3, "the dismissed screen still renders every update")
        #expect(screens.gauge("renders") == 4)
        try screens.workloadCase.tearDown(context: screens.context)
        #expect(screens.metric("screensAliveAfterTeardown") == 1)
        #expect(screens.metric("subscribersAliveAfterTeardown") == 1)
        #expect(screens.metric("deliveriesAfterDismiss") == 3)
    }

    @Test func implicitFiniteOutlivesAnEarlyDismissalUntilTheLoadAnswersThenGoes() throws {
        let screens = try Screens(.implicitFinite)
        try screens.run("present", "dismiss")
        // Dismissed before the load answered: the pending load keeps subscriber and screen alive.
        #expect(screens.gauge("liveScreens") == 1)
        #expect(screens.gauge("liveSubscribers") == 1)
        try screens.run("publish")
        // The answer reaches the dismissed screen once; completion then tears everything down.
        #expect(screens.gauge("deliveriesAfterDismiss") == 1)
        #expect(screens.gauge("liveScreens") == 0)
        #expect(screens.gauge("liveSubscribers") == 0)
        try screens.run("publish")
        #expect(screens.gauge("deliveriesAfterDismiss") == 1, "completed: nothing more is delivered")
        try screens.workloadCase.tearDown(context: screens.context)
    }

    @Test func disposingEndsTheDeliveriesAndFreesTheSubscriber() throws {
        let screens = try Screens(.disposed)
        try screens.run("present", "publish")
        #expect(screens.gauge("liveSubscribers") == 1)
        try screens.run("dismiss", "publish", "publish")
        #expect(screens.gauge("deliveriesAfterDismiss") == 0)
        #expect(screens.gauge("liveScreens") == 0)
        #expect(screens.gauge("liveSubscribers") == 0)
        #expect(screens.gauge("renders") == 1)
        try screens.workloadCase.tearDown(context: screens.context)
    }

    /// A publisher derived from the screen completes only when the screen deallocates: a strong
    /// capture prevents exactly that. The store going away does not help; a weak capture does.
    @Test(arguments: [
        (SubscriptionStrategy.selfDerivedStrong, Int64(1)), (SubscriptionStrategy.selfDerivedWeak, Int64(0)),
    ])
    func aSelfDerivedSubscriptionLivesExactlyAsLongAsItsScreen(strategy: SubscriptionStrategy, survivors: Int64) throws
    {
        let screens = try Screens(strategy)
        try screens.run("present", "publish")
        #expect(screens.gauge("renders") == 2, "the name on subscription and the published one")
        try screens.run("dismiss")
        try screens.workloadCase.tearDown(context: screens.context)
        #expect(screens.gauge("liveScreens") == survivors)
        #expect(screens.gauge("liveSubscribers") == survivors)
        #expect(screens.gauge("deliveriesAfterDismiss") == 0, "nothing sets a dismissed screen's own name")
    }

    /// The opposite defaults side by side, on a bare OpenCombine subject: a sink whose
    /// AnyCancellable nobody keeps is cancelled at once; a RAC-style subscriber nobody keeps lives on.
    @Test func anUnstoredCombineSinkEndsAtOnceWhereAnUnstoredSubscriberLivesOn() {
        let subject = PassthroughSubject<Int, Never>()
        let deliveries = Deliveries(afterDismissGauge: CaseContext(strategy: "test", gaugeNames: ["g"]).gauge("g"))
        var sinkReceived = 0
        var signalReceived = 0
        _ = subject.sink { _ in sinkReceived += 1 }
        weak var subscriber: AnyObject?
        subject.subscribeNext(
            presence: ScreenPresence(), deliveries: deliveries, onSubscribe: { subscriber = $0 },
            { _ in signalReceived += 1 })
        subject.send(1)
        subject.send(2)
        #expect(sinkReceived == 0, "Combine: the discarded AnyCancellable cancelled the sink")
        #expect(signalReceived == 2, "RAC: the subscription lives without being stored")
        #expect(subscriber != nil)
        subject.send(completion: .finished)
        #expect(subscriber == nil, "completion tore the subscription down")
        subject.send(3)
        #expect(signalReceived == 2)
    }
}
