import HarnessModel
import Runner
import Scenarios
import TestSupport
import Testing
import WorkloadKit

/// `repetitions:` in a scenario file: a count, `auto`, or `{auto: true, target: 2%, min: 6, max: 15}`.
struct RepetitionsParserTests {
    let parser = ScenarioParser(catalog: WorkloadCatalog([ExampleWorkload()]))

    func parse(_ repetitions: String) throws(ScenarioError) -> ScenarioSpec {
        try parser.parse("scenario: s\nworkload: example\nrepetitions: \(repetitions)\n", file: "f.yaml")
    }

    func diagnostics(_ repetitions: String) -> [String] {
        do throws(ScenarioError) {
            _ = try parse(repetitions)
            return []
        } catch {
            if case .invalid(let found) = error { return found.map(\.description) }
            return ["\(error)"]
        }
    }

    @Test func readsTheThreeForms() throws {
        #expect(try parse("4").repetitions == .fixed(4))
        #expect(try parse("auto").repetitions == .auto(AdaptiveRepetitions()))
        #expect(
            try parse("{auto: true, target: 5%, min: 8, max: 20}").repetitions
                == .auto(AdaptiveRepetitions(target: 0.05, minimum: 8, maximum: 20)))
        #expect(
            try parse("{target: 0.01}").repetitions
                == .auto(AdaptiveRepetitions(target: 0.01, minimum: 6, maximum: 15)))
        let block = try parser.parse(
            "scenario: s\nworkload: example\nrepetitions:\n  max: 9\n", file: "f.yaml")
        #expect(block.repetitions == .auto(AdaptiveRepetitions(target: 0.02, minimum: 6, maximum: 9)))
        #expect(try parser.parse("scenario: s\nworkload: example\n", file: "f.yaml").repetitions == .fixed(3))
    }

    @Test(arguments: [
        (
            "0", "f.yaml:3:14: 'repetitions' 0 is out of range; allowed: 1...100, or `auto`"
        ),
        (
            "aut",
            "f.yaml:3:14: bad value 'aut' for 'repetitions'; expected a whole number in 1...100, `auto`, or a "
                + "mapping such as {auto: true, target: 2%, min: 6, max: 15} (did you mean 'auto'?)"
        ),
        (
            "[6, 15]",
            "f.yaml:3:14: 'repetitions' is a whole number in 1...100, `auto`, or a mapping such as "
                + "{auto: true, target: 2%, min: 6, max: 15}"
        ),
        (
            "{auto: false}", "f.yaml:3:21: 'auto: false' asks for a fixed count: write it as 'repetitions: N' instead"
        ),
        (
            "{target: 80%}",
            "f.yaml:3:23: bad value '80%' for 'repetitions.target'; expected how far the 95% interval "
                + "of the median may reach from it, from 0.1% to 50%, e.g. 2%"
        ),
        (
            "{min: 3}",
            "f.yaml:3:20: bad value '3' for 'repetitions.min'; expected a whole number in 6...100 (a 95% "
                + "interval of the median needs at least 6 repetitions)"
        ),
        (
            "{min: 20}",
            "f.yaml:3:20: 'repetitions.min' 20 is above 'repetitions.max' 15 (the default); raise 'max' or "
                + "lower 'min'"
        ),
        (
            "{maxi: 9}",
            "f.yaml:3:15: unknown repetitions key 'maxi'; expected one of: auto, target, min, max "
                + "(did you mean 'max'?)"
        ),
    ])
    func refusesBadValuesWithTheirPlace(_ repetitions: String, _ message: String) {
        #expect(diagnostics(repetitions) == [message])
    }

    @Test func planListsTheMinimumAndNumbersStacksAfterTheMaximum() throws {
        let spec = try parse("{min: 7, max: 9}")
        var options = RunOptions()
        let measured = RunPlanner.cases(of: spec, options: options)
        #expect(measured.map(\.repetition).max() == 7)
        options.attribution = AttributionRequest()
        let attributed = RunPlanner.cases(of: spec, options: options).filter { $0.attribution != nil }
        #expect(!attributed.isEmpty)
        #expect(attributed.allSatisfy { $0.repetition == 10 })
        options.quick = true
        #expect(
            RunPlanner.cases(of: spec, options: options).filter { $0.attribution == nil }.map(\.repetition).max() == 1)
    }
}
