import HarnessModel
import Scenarios
import TestSupport
import Testing
import WorkloadKit

@testable import Runner

/// The further repetitions of `repetitions: auto`, decided round by round from made-up results.
struct RepetitionScheduleTests {
    let catalog = WorkloadCatalog([ExampleWorkload()])

    func plan(_ repetitions: String, shard: Shard? = nil) throws -> RunPlan {
        let spec = try ScenarioParser(catalog: catalog).parse(
            "scenario: s\nworkload: example\nrepetitions: \(repetitions)\n", file: "s.yaml")
        var request = RunRequest()
        request.inlineScenarios = [spec]
        request.shard = shard
        return try RunPlanner.plan(request, catalog: catalog)
    }

    /// A completed case of `strategy` with a net peak of `net` bytes.
    func result(_ strategy: String, _ repetition: Int, net: Int) -> CaseResult {
        CaseResult.draft(scenario: "s", workload: "example", strategy: strategy, repetition: repetition) { result in
            result.baselineAllocatedBytes = 1_000_000
            result.peak.allocatedBytes = 1_000_000 + net
        }
    }

    @Test func addsOneRepetitionPerNoisyStrategyAfterEachRound() throws {
        let plan = try plan("{min: 6, max: 8}")
        #expect(plan.cases.count == 12)
        #expect(plan.scenarios[0].repetitions == .auto(AdaptiveRepetitions(target: 0.02, minimum: 6, maximum: 8)))
        var schedule = RepetitionSchedule(plan)
        // Steady `unbounded-dispatch`, noisy `signal-next` (±20%): only the noisy one needs more.
        let noisy = [100_000, 120_000, 80_000, 100_000, 90_000, 110_000, 100_000, 85_000]
        var added: [CaseSpec] = []
        for spec in plan.cases {
            let net = spec.strategy == "signal-next" ? noisy[spec.repetition - 1] : 5_000_000
            added = schedule.casesAfter(result(spec.strategy, spec.repetition, net: net))
            if spec != plan.cases.last { #expect(added.isEmpty, "nothing before the round ends") }
        }
        #expect(added.map(\.strategy) == ["signal-next"])
        #expect(added.map(\.repetition) == [7])
        #expect(added.first?.steps == plan.cases[1].steps)
        added = schedule.casesAfter(result("signal-next", 7, net: noisy[6]))
        #expect(added.map(\.repetition) == [8])
        #expect(schedule.casesAfter(result("signal-next", 8, net: noisy[7])).isEmpty, "the maximum is 8")
    }

    @Test func aFixedCountIsLeftAlone() throws {
        let plan = try plan("3")
        var schedule = RepetitionSchedule(plan)
        let added = plan.cases.flatMap { schedule.casesAfter(result($0.strategy, $0.repetition, net: $0.repetition)) }
        #expect(added.isEmpty)
    }

    @Test func shardsCannotSplitAutoRepetitions() throws {
        #expect {
            try plan("auto", shard: Shard(index: 1, count: 2))
        } throws: { error in
            "\(error)".contains("s.yaml: --shard cannot split `repetitions: auto`")
                && (error as? RunError)?.isUsageError == true
        }
        #expect(try plan("4", shard: Shard(index: 1, count: 2)).cases.count == 4)
    }

    @Test func repeatAutoKeepsAFilesOwnSettings() throws {
        let own = try ScenarioParser(catalog: catalog).parse(
            "scenario: s\nworkload: example\nrepetitions: {target: 5%, max: 9}\n", file: "s.yaml")
        let fixed = try ScenarioParser(catalog: catalog).parse("scenario: s\nworkload: example\n", file: "s.yaml")
        let options = RunOptions(repetitions: .auto(AdaptiveRepetitions()))
        #expect(RunPlanner.repetitions(of: own, options: options) == own.repetitions)
        #expect(RunPlanner.repetitions(of: fixed, options: options) == .auto(AdaptiveRepetitions()))
        #expect(RunPlanner.repetitions(of: own, options: RunOptions(repetitions: 2)) == .fixed(2))
    }
}
