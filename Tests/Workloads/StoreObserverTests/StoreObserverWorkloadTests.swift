import Foundation
import HarnessModel
import Measurement
import Scenarios
import TestSupport
import Testing
import WorkloadKit

@testable import StoreObserverWorkload

@Suite(.serialized, .timeLimit(.minutes(5))) struct StoreObserverWorkloadTests {
    private static func parameters(_ overrides: [String: ParameterValue] = [:]) -> ParameterValues {
        var values = ParameterValues(
            Dictionary(
                uniqueKeysWithValues: StoreObserverWorkload().descriptor.parameters.map { ($0.name, $0.defaultValue) }))
        for (name, value) in overrides { values[name] = value }
        return values
    }

    private static func run(
        _ strategy: StoreObserverWorkload.Strategy, _ overrides: [String: ParameterValue] = [:],
        churn: Duration = .milliseconds(200)
    ) throws -> CaseResult {
        let descriptors = StoreObserverWorkload().descriptor.steps + BuiltInStep.all
        let steps = ["subscribe", "churn", "cancel", "settle"].compactMap { name -> StepInvocation? in
            guard let descriptor = descriptors.first(where: { $0.name == name }) else { return nil }
            var arguments = ParameterValues(
                Dictionary(uniqueKeysWithValues: descriptor.arguments.map { ($0.name, $0.defaultValue) }))
            if name == "churn" { arguments["duration"] = .duration(nanoseconds: churn.nanoseconds) }
            return StepInvocation(name: name, phase: name, arguments: arguments)
        }
        let spec = CaseSpec(
            scenario: "test", workload: "store-observer", strategy: strategy.rawValue, repetition: 1,
            parameters: parameters(overrides), steps: steps, samplingIntervalNanoseconds: 1_000_000,
            settleNanoseconds: 10_000_000)
        return try CaseExecutor(catalog: WorkloadCatalog([StoreObserverWorkload()])).result(
            spec, scratchDirectory: "/tmp")
    }

    @Test func declaresTheFourStrategiesOfTheIssue() {
        let descriptor = StoreObserverWorkload().descriptor
        #expect(descriptor.name == "store-observer")
        #expect(
            descriptor.strategies.map(\.name) == [
                "legacy-live-query", "retain-items", "extract-ids-dematerialize", "no-diff",
            ])
        #expect(descriptor.gauges.map(\.name) == ["itemsMaterialized", "itemsRetained", "diffMicroseconds"])
    }

    @Test func theShippedScenarioStatesTheDefaults() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Scenarios/store-observer.yaml"), encoding: .utf8)
        let scenario = try ScenarioParser(catalog: WorkloadCatalog([StoreObserverWorkload()])).parse(
            text, file: "Scenarios/store-observer.yaml")
        #expect(scenario.strategies.map(\.name) == StoreObserverWorkload.Strategy.allCases.map(\.rawValue))
        #expect(scenario.steps.map(\.name) == StoreObserverWorkload().descriptor.defaultSteps)
        #expect(scenario.parameters == Self.parameters())
    }

    @Test(arguments: StoreObserverWorkload.Strategy.allCases)
    func everyStrategyRunsAndHoldsWhatItShould(_ strategy: StoreObserverWorkload.Strategy) throws {
        let result = try Self.run(
            strategy, ["documents": .count(100), "payloadSize": .bytes(256), "writeRate": .rate(perSecond: 50)])
        #expect(result.status == .ok, "\(String(describing: result.failure))")
        expectMetrics(result.completed?.metrics ?? [], declaredBy: StoreObserverWorkload().descriptor, complete: true)
        func metric(_ name: String) -> Double { result.metric(name)?.value ?? -1 }
        #expect(metric("writesApplied") == 10)
        #expect(metric("callbacksDelivered") >= 1)
        switch strategy {
        case .legacyLiveQuery:
            #expect(metric("maxItemsMaterialized") == 0, "the live query hands out documents, not items")
            #expect(metric("documentsCopied") >= metric("callbacksDelivered") * 90)
        case .retainItems:
            // The previous result's items stay materialized while the next one's are.
            #expect(metric("maxItemsMaterialized") > 100 || metric("callbacksDelivered") == 1)
            #expect(metric("diffTimeP50") > 0)
        case .extractIDsDematerialize:
            #expect(metric("maxItemsMaterialized") == 1)
            #expect(metric("diffTimeP50") > 0)
        case .noDiff:
            #expect(metric("maxItemsMaterialized") == 1)
            #expect(metric("diffTimeP50") == 0)
        }
    }

    @Test func metadataOnlyWritesAreUpdatesForTheLegacyLiveQueryOnly() throws {
        let touchesOnly: [String: ParameterValue] = [
            "documents": .count(50), "payloadSize": .bytes(64), "writeRate": .rate(perSecond: 50),
            "insertShare": .fraction(0), "deleteShare": .fraction(0), "moveShare": .fraction(0),
            "touchShare": .fraction(1),
        ]
        let legacy = try Self.run(.legacyLiveQuery, touchesOnly)
        let differ = try Self.run(.extractIDsDematerialize, touchesOnly)
        #expect((legacy.metric("updatesReported")?.value ?? 0) >= 1)
        #expect((differ.metric("callbacksDelivered")?.value ?? 0) >= 2, "touches still call the observer")
        #expect(differ.metric("updatesReported")?.value == 0)
    }

    @Test func aWriteMixAboveOneHundredPercentFailsTheCaseWithAFix() throws {
        let result = try Self.run(
            .noDiff, ["insertShare": .fraction(0.6), "deleteShare": .fraction(0.6)], churn: .zero)
        #expect(result.status == .failed)
        #expect(result.failure?.message?.contains("must be at most 100%") == true)
    }
}
