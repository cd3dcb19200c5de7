import HarnessModel
import Runner
import Scenarios
import TestSupport
import Testing
import WorkloadKit

/// Shard selection and sweep expansion in `RunPlanner`, from parsed scenario values (no file, no child process).
struct ShardSelectionTests {
    let catalog = WorkloadCatalog([ExampleWorkload()])

    /// Two scenarios of the example workload (two strategies each), `repetitions` each, planned as `shard` says.
    func plan(repetitions: Int = 3, shard: Shard? = nil) throws -> RunPlan {
        let parser = ScenarioParser(catalog: catalog)
        var request = RunRequest()
        request.inlineScenarios = try ["first", "second"].map { name in
            try parser.parse(
                "scenario: \(name)\nworkload: example\nrepetitions: \(repetitions)\n", file: "\(name).yaml")
        }
        request.shard = shard
        return try RunPlanner.plan(request, catalog: catalog)
    }

    /// A case as `scenario/strategy#repetition`, to compare case lists.
    func names(_ cases: [CaseSpec]) -> [String] { cases.map { "\($0.scenario)/\($0.strategy)#\($0.repetition)" } }

    @Test func aShardTakesEveryNthCaseOfTheRunOrderStartingAtItsIndex() throws {
        let whole = try plan()
        #expect(whole.cases.count == 12)  // 2 scenarios x 3 repetitions x 2 strategies
        let second = try plan(shard: Shard(index: 2, count: 4))
        let positions = [1, 5, 9]
        #expect(names(second.cases) == names(positions.map { whole.cases[$0] }))
        #expect(
            names(second.cases) == [
                "first/signal-next#1", "first/signal-next#3", "second/signal-next#2",
            ])
        // The plan still knows every scenario and every case it does not run, for the report's shape.
        #expect(second.scenarios.map(\.spec.name) == ["first", "second"])
        #expect(second.scenarios.flatMap(\.cases).count == 12)
    }

    @Test(arguments: [1, 2, 3, 5, 12, 13])
    func theShardsOfARunPartitionItsCases(_ count: Int) throws {
        let whole = names(try plan().cases)
        var seen: [String] = []
        for index in 1...count {
            let shard = try #require(Shard(index: index, count: count))
            seen += names(try plan(shard: shard).cases)
        }
        #expect(seen.count == whole.count, "every case once")
        #expect(Set(seen) == Set(whole))
    }

    @Test func aShardReadsIOfN() throws {
        let shard = try #require(Shard(parsing: "3/4"))
        #expect(shard.index == 3 && shard.count == 4)
        #expect(shard.contains(position: 2) && shard.contains(position: 6) && !shard.contains(position: 3))
        #expect(Shard(parsing: "1/1") == Shard(index: 1, count: 1))
    }

    @Test(arguments: ["0/2", "3/2", "1/0", "-1/2", "a/2", "1/b", "1/2/3", "/2", "1/", "", "2", "1 / 2", "½/2"])
    func aMalformedShardIsRefused(_ text: String) {
        #expect(Shard(parsing: text) == nil, "'\(text)'")
    }
}

/// `--set key=v1,v2,...`: one scenario per value, named for its point, and only one sweep per run.
struct SweepExpansionTests {
    let catalog = WorkloadCatalog([ExampleWorkload()])

    func request(_ overrides: [String]) throws -> RunRequest {
        var request = RunRequest(overrides: overrides)
        request.inlineScenarios = [
            try ScenarioParser(catalog: catalog).parse("scenario: s\nworkload: example\n", file: "s.yaml")
        ]
        return request
    }

    @Test func aSweepRunsTheScenarioOncePerValueNamedScenarioAtKeyEqualsValue() throws {
        let plan = try RunPlanner.plan(try request(["burst.duration=1s,2s,4s", "payloadSize=8KiB"]), catalog: catalog)
        #expect(plan.sweepKey == "burst.duration")
        #expect(
            plan.scenarios.map(\.spec.name) == [
                "s @ burst.duration=1s", "s @ burst.duration=2s", "s @ burst.duration=4s",
            ])
        #expect(plan.scenarios.allSatisfy { $0.baseName == "s" })
        #expect(
            plan.scenarios.map { $0.sweepPoint?.label } == [
                "burst.duration=1s", "burst.duration=2s", "burst.duration=4s",
            ])
        #expect(
            plan.scenarios.map { $0.sweepPoint?.value } == [1, 2, 4].map { .duration(nanoseconds: $0 * 1_000_000_000) })
        // Each point's cases carry its name and its value; the fixed override applies at every point.
        for (point, seconds) in zip(plan.scenarios, [1, 2, 4] as [Int64]) {
            #expect(point.cases.allSatisfy { $0.scenario == point.spec.name })
            let burst = try #require(point.cases.first?.steps.first { $0.name == "burst" })
            #expect(burst.arguments["duration"] == .duration(nanoseconds: seconds * 1_000_000_000))
            #expect(point.cases.allSatisfy { $0.parameters["payloadSize"] == .bytes(8192) })
        }
        #expect(plan.cases.count == 3 * 3 * 2)  // 3 points x 3 repetitions (the default) x 2 strategies
    }

    @Test func withoutASweepNamesStayAsTheyAre() throws {
        let plan = try RunPlanner.plan(try request(["payloadSize=8KiB"]), catalog: catalog)
        #expect(plan.sweepKey == nil)
        #expect(plan.scenarios.map(\.spec.name) == ["s"])
        #expect(plan.scenarios[0].sweepPoint == nil)
    }

    @Test func aSecondSweepIsRefusedNamingTheFirst() throws {
        #expect {
            try RunPlanner.plan(try request(["burst.duration=1s,2s", "payloadSize=1KiB,2KiB"]), catalog: catalog)
        } throws: { error in
            "\(error)".contains("payloadSize=1KiB,2KiB")
                && "\(error)".contains(
                    "only one --set may list several values; this run already sweeps burst.duration=1s,2s")
        }
    }
}
