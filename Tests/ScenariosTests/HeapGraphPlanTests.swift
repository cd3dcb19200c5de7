import HarnessModel
import Runner
import Scenarios
import TestSupport
import Testing
import WorkloadKit

/// Which strategies get the instrumented case that captures the heap: every one with `--heap-graph`; without it,
/// those whose leaks the file expects something of (`expect:`) or gates on (`leakedBlocks`, `leakedBytes`,
/// `leakedCycles`), so an expectation or a threshold never goes without its evidence; no other.
struct HeapGraphPlanTests {
    let parser = ScenarioParser(catalog: WorkloadCatalog([ExampleWorkload()]))

    func heapCases(_ body: String, options: RunOptions = RunOptions()) throws -> [String] {
        let spec = try parser.parse("scenario: s\nworkload: example\nrepetitions: 2\n" + body, file: "f.yaml")
        return RunPlanner.cases(of: spec, options: options).filter { $0.heapGraph != nil }.map(\.strategy)
    }

    @Test func anExpectationOrAHeapThresholdBringsTheHeapGraphOfItsStrategyOnly() throws {
        let strategies = "strategies:\n  - {name: unbounded-dispatch, expect: leaks}\n  - signal-next\n"
        #expect(try heapCases(strategies) == ["unbounded-dispatch"])
        let gated =
            "strategies: [unbounded-dispatch, signal-next]\nthresholds:\n  signal-next:\n    leakedBlocks: <= 0\n"
        #expect(try heapCases(gated) == ["signal-next"])
        #expect(try heapCases("strategies: [unbounded-dispatch, signal-next]\n").isEmpty)
        var options = RunOptions()
        options.heapGraph = HeapGraphRequest()
        #expect(try heapCases("strategies: [unbounded-dispatch, signal-next]\n", options: options).count == 2)
    }

    @Test func aHeapGraphFigureCannotRank() {
        #expect(throws: ScenarioError.self) {
            _ = try parser.parse("scenario: s\nworkload: example\nrank: leakedBlocks\n", file: "f.yaml")
        }
        do {
            _ = try parser.parse("scenario: s\nworkload: example\nrank: leakedBlocks\n", file: "f.yaml")
        } catch {
            #expect("\(error)".contains("f.yaml:3:7: 'leakedBlocks' cannot rank strategies"), "\(error)")
        }
    }
}
