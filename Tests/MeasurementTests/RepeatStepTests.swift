import AllocatorProbe
import Foundation
import HarnessModel
import Measurement
import Runner
import Scenarios
import TestSupport
import Testing
import Verdicts
import WorkloadKit

@Suite struct RepeatStepParsingTests {
    let parser = ScenarioParser(catalog: WorkloadCatalog([BlockWorkload()]))

    func parse(_ steps: String) throws(ScenarioError) -> ScenarioSpec {
        try parser.parse(
            "scenario: s\nworkload: blocks\nstrategies:\n  - {name: cycle, expect: leaks}\n  - "
                + "release\nsteps:\n\(steps)\n",
            file: "s.yaml")
    }

    func diagnostics(_ steps: String) -> [String] {
        do {
            _ = try parse(steps)
            return []
        } catch {
            guard case .invalid(let found) = error else { return ["\(error)"] }
            return found.map(\.description)
        }
    }

    @Test func aRepeatCarriesItsNestedSteps() throws {
        let spec = try parse(
            "  - repeat: {times: 20, warmup: 3, steps: [allocate, {idle: 1ms}], phase: screens}\n  - idle: 5ms")
        let step = try #require(spec.steps.first)
        #expect(step.name == "repeat")
        #expect(step.phase == "screens")
        #expect(step.arguments.count("times") == 20)
        #expect(step.arguments.count("warmup") == 3)
        #expect(step.arguments.duration("settle") == .milliseconds(5))
        #expect(step.body?.map(\.name) == ["allocate", "idle"])
        #expect(step.body?.last?.arguments.duration("duration") == .milliseconds(1))
        #expect(spec.steps.last?.body == nil)
    }

    @Test func theExpectationReachesTheCaseSpec() throws {
        let spec = try parse("  - repeat: {times: 5, warmup: 1, steps: [allocate]}")
        let cases = RunPlanner.cases(of: spec, options: RunOptions(repetitions: 1))
        #expect(cases.filter { !$0.isInstrumented }.map(\.expectation) == [.leaks, nil])
        // The strategy with an expectation also gets the case that captures its heap after teardown.
        #expect(cases.filter(\.isInstrumented).map(\.expectation) == [.leaks])
        #expect(cases.last?.heapGraph == .afterTeardown)
    }

    @Test func quickModeQuartersDurationsInsideTheBody() throws {
        let spec = try parse("  - repeat: {times: 5, warmup: 1, steps: [{idle: 8ms}]}")
        let step = try #require(RunPlanner.cases(of: spec, options: RunOptions(quick: true)).first?.steps.first)
        #expect(step.body?.first?.arguments.duration("duration") == .milliseconds(2))
    }

    @Test func aRepeatWithoutStepsSaysHowToWriteOne() {
        #expect(
            diagnostics("  - repeat: {times: 5}") == [
                "s.yaml:7:5: step 'repeat' needs the steps to repeat, e.g. repeat: {times: 20, warmup: 3, steps: "
                    + "[allocate, idle]}"
            ])
        #expect(diagnostics("  - repeat: {times: 5, steps: []}").first?.contains("non-empty list of steps") == true)
    }

    @Test func nestedRepeatsAndUnknownBodyStepsAreRefusedWithTheirPlace() {
        let found = diagnostics("  - repeat: {times: 5, steps: [alocate, {repeat: {times: 3, steps: [allocate]}}]}")
        #expect(
            found == [
                "s.yaml:7:32: unknown step 'alocate'; expected one of: allocate, idle, settle (did you mean "
                    + "'allocate'?)",
                "s.yaml:7:41: 'repeat' cannot be nested inside 'repeat'; flatten the loops into one body",
            ])
    }

    @Test func tooFewIterationsAfterWarmUpAreRefused() {
        let found = diagnostics("  - repeat: {times: 5, warmup: 3, steps: [allocate]}")
        #expect(
            found == [
                "s.yaml:7:5: 'repeat' runs 5 iterations with 3 of warm-up, leaving 2 to fit the growth line; "
                    + "it needs at least 3: raise 'times' to 6 or lower 'warmup'"
            ])
    }

    @Test func stepsIsOnlyAnArgumentOfRepeat() {
        #expect(
            diagnostics("  - idle: {duration: 1ms, steps: [allocate]}").first?.contains(
                "unknown argument 'steps' of step 'idle'") == true)
    }

    @Test func caseSpecsWithoutTheNewFieldsStillDecode() throws {
        let json = """
            {"scenario":"s","workload":"blocks","strategy":"cycle","repetition":1,"parameters":{"values":{}},
             "steps":[{"name":"allocate","phase":"allocate","arguments":{"values":{}}}],
             "samplingIntervalNanoseconds":0,"sampleCapacity":16,"settleNanoseconds":0,"timeoutNanoseconds":1000000000}
            """
        let spec = try JSONDecoder().decode(CaseSpec.self, from: Data(json.utf8))
        #expect(spec.expectation == nil)
        #expect(spec.steps.first?.body == nil)
        let withBody = try parse("  - repeat: {times: 5, warmup: 1, steps: [allocate]}")
        let planned = try #require(RunPlanner.cases(of: withBody, options: RunOptions(repetitions: 1)).first)
        #expect(try JSONDecoder().decode(CaseSpec.self, from: JSONEncoder().encode(planned)) == planned)
    }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct RepeatStepExecutionTests {
    let catalog = WorkloadCatalog([BlockWorkload()])

    func run(_ strategy: String, times: Int) throws -> CaseResult {
        let yaml = """
            scenario: s
            workload: blocks
            strategies: [\(strategy)]
            steps:
              - repeat: {times: \(times), warmup: 2, settle: 0ms, steps: [allocate]}
            interval: 1ms
            settle: 10ms
            """
        let spec = try ScenarioParser(catalog: catalog).parse(yaml, file: "s.yaml")
        let caseSpec = try #require(RunPlanner.cases(of: spec, options: RunOptions(repetitions: 1)).first)
        return try CaseExecutor(catalog: catalog).result(caseSpec, scratchDirectory: "/tmp")
    }

    @Test func aCycleLeaksOneBlockPerIterationInCountAndBytes() throws {
        let result = try run("cycle", times: 12)
        let leaks = try #require(result.completed?.leaks)
        #expect(leaks.survivors == [TypeCount(typeName: "Block", count: 12)])
        #expect(leaks.tracked == [TypeCount(typeName: "Block", count: 12)])
        let series = try #require(leaks.growth.first)
        #expect(series.liveBytesAfterIteration.count == 12)
        #expect(series.warmupIterations == 2)
        let fit = try #require(series.fit)
        // One leaked block: its array (header + 4000 bytes, size-class rounded), the object and its side table.
        let arrayBytes = AllocatorCost.arrayBytes(of: UInt8.self, count: BlockWorkload.blockBytes)
        #expect(fit.slopeBytesPerIteration >= Double(arrayBytes))
        #expect(fit.slopeBytesPerIteration < Double(arrayBytes + 256))
        #expect(result.leakJudgement.verdict == .leaks)
        let residue = try #require(result.completed?.residueBytes)
        #expect(residue >= 12 * arrayBytes - leaks.residueUncertaintyBytes)
    }

    @Test func releasedBlocksLeaveNoSurvivorAndNoGrowth() throws {
        let result = try run("release", times: 12)
        let leaks = try #require(result.completed?.leaks)
        #expect(leaks.tracked == [TypeCount(typeName: "Block", count: 12)], "the tracker saw every block")
        #expect(leaks.survivors.isEmpty)
        let fit = try #require(leaks.growth.first?.fit)
        #expect(!LeakCriteria.standard.isGrowing(fit), "\(leaks.growth.first?.liveBytesAfterIteration ?? [])")
        #expect(result.leakJudgement.verdict == .leakFree)
        #expect(result.leakJudgement.outcome == .asExpected)
    }
}
