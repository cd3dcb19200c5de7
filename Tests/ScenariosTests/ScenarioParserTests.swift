import HarnessModel
import Measurement
import Runner
import Scenarios
import TestSupport
import Testing
import WorkloadKit

struct ScenarioParserTests {
    let parser = ScenarioParser(catalog: WorkloadCatalog([ExampleWorkload()]))

    func diagnostics(_ text: String) -> [String] {
        do {
            _ = try parser.parse(text, file: "Scenarios/x.yaml")
            return []
        } catch {
            if case .invalid(let found) = error { return found.map(\.description) }
            return ["\(error)"]
        }
    }

    @Test func parsesAFullScenario() throws {
        let spec = try parser.parse(
            """
            scenario: live
            description: Two strategies.
            workload: example
            parameters:
              documents: 2000
              payloadSize: 8KiB
              writeRate: 250/s
              consumerWork: 2ms
              matchingShare: 25%
              mode: sleep
            strategies:
              - unbounded-dispatch
              - name: signal-next
                expect: leak-free
                parameters: {payloadSize: 1KiB}
            steps:
              - subscribe
              - burst: 3s
              - idle: 200ms
              - burst: {duration: 1s, phase: second-burst}
              - settle
            repetitions: 5
            interval: 2ms
            timeout: 30s
            """, file: "Scenarios/x.yaml")
        #expect(spec.name == "live")
        #expect(spec.parameters.count("documents") == 2000)
        #expect(spec.parameters.bytes("payloadSize") == 8192)
        #expect(spec.parameters.rate("writeRate") == 250)
        #expect(spec.parameters.duration("consumerWork") == .milliseconds(2))
        #expect(spec.parameters.fraction("matchingShare") == 0.25)
        #expect(spec.parameters.choice("mode") == "sleep")
        #expect(spec.parameters.flag("verbose") == false)
        #expect(spec.strategies.map(\.name) == ["unbounded-dispatch", "signal-next"])
        #expect(spec.strategies[1].parameters.bytes("payloadSize") == 1024)
        #expect(spec.strategies[1].expect == "leak-free")
        #expect(spec.steps.map(\.phase) == ["subscribe", "burst", "idle", "second-burst", "settle"])
        #expect(spec.steps[1].arguments.duration("duration") == .seconds(3))
        #expect(spec.repetitions == 5)
        #expect(spec.interval == .milliseconds(2))
        #expect(spec.timeout == .seconds(30))
    }

    @Test func fillsDefaultsAndNumbersRepeatedPhases() throws {
        let spec = try parser.parse("scenario: s\nworkload: example\nsteps: [burst, burst, burst]\n", file: "f.yaml")
        #expect(spec.strategies.map(\.name) == ["unbounded-dispatch", "signal-next"])
        #expect(spec.steps.map(\.phase) == ["burst", "burst#2", "burst#3"])
        #expect(spec.parameters.count("documents") == 100)
        #expect(spec.repetitions == 3)
    }

    @Test func rankAndRateNameAFigureAndAPhase() throws {
        let spec = try parser.parse(
            "scenario: s\nworkload: example\nsteps: [subscribe, burst]\nrank: exactPeak\nrate: burst\n", file: "f.yaml")
        #expect(spec.ranking == .exactPeak)
        #expect(spec.ratePhase == "burst")
        let plain = try parser.parse("scenario: s\nworkload: example\nsteps: [burst]\n", file: "f.yaml")
        #expect(plain.ranking == .peakAllocated)
        #expect(plain.ratePhase == nil)
    }

    @Test func rateMustNameAPhaseOfTheSteps() {
        let found = diagnostics("scenario: s\nworkload: example\nsteps: [subscribe, burst]\nrate: brust\n")
        #expect(
            found == [
                "Scenarios/x.yaml:4:7: no phase 'brust' for 'rate'; the scenario's phases: subscribe, burst (did "
                    + "you mean 'burst'?)"
            ])
    }

    @Test func reportsUnknownStrategyWithLocationAndChoices() {
        let found = diagnostics("scenario: s\nworkload: example\nstrategies:\n  - signal-nxt\n")
        #expect(
            found == [
                "Scenarios/x.yaml:4:5: unknown strategy 'signal-nxt'; expected one of: unbounded-dispatch, "
                    + "signal-next (did you mean 'signal-next'?)"
            ])
    }

    @Test func reportsEveryProblemAtOnce() {
        let found = diagnostics(
            """
            scenario: s
            workload: example
            strategys: [signal-next]
            parameters:
              payloadSize: 4XB
              writeRate: 500
              documents: 0
              colour: blue
            steps:
              - burst: forever
              - dance
            repetitions: many
            """)
        #expect(
            found == [
                "Scenarios/x.yaml:3:1: unknown key 'strategys'; expected one of: "
                    + "\(ScenarioParser.topLevelKeys.joined(separator: ", ")) (did you mean 'strategies'?)",
                "Scenarios/x.yaml:5:16: bad value '4XB' for 'payloadSize'; expected a size with a binary unit, e.g. "
                    + "4KiB, 1.5MiB, 512B",
                "Scenarios/x.yaml:6:14: bad value '500' for 'writeRate'; expected a rate, e.g. 500/s, 30/min",
                "Scenarios/x.yaml:7:14: value '0' for 'documents' is out of range; allowed: 1...1000000",
                "Scenarios/x.yaml:8:3: unknown parameter 'colour' of workload 'example'; expected one of: "
                    + "documents, payloadSize, writeRate, consumerWork, matchingShare, verbose, mode",
                "Scenarios/x.yaml:10:12: bad value 'forever' for 'burst.duration'; expected a duration, e.g. 5ms, "
                    + "3s, 200us",
                "Scenarios/x.yaml:11:5: unknown step 'dance'; expected one of: subscribe, burst, idle, settle, repeat",
                "Scenarios/x.yaml:12:14: bad value 'many' for 'repetitions'; expected a whole number in 1...100, "
                    + "`auto`, or a mapping such as {auto: true, target: 2%, min: 6, max: 15}",
            ])
    }

    @Test func reportsUnknownWorkloadAndMissingKeys() {
        #expect(
            diagnostics("scenario: s\nworkload: exampel\n") == [
                "Scenarios/x.yaml:2:11: unknown workload 'exampel'; expected one of: example, command (did you mean "
                    + "'example'?)"
            ])
        #expect(diagnostics("workload: example\n") == ["Scenarios/x.yaml:1:1: missing required key 'scenario'"])
    }

    @Test func reportsInvalidYAMLWithItsLocation() {
        let found = diagnostics("scenario: s\nworkload: [example\n")
        #expect(found.count == 1)
        #expect(found[0].hasPrefix("Scenarios/x.yaml:3:1: invalid YAML"))
    }

    @Test func overridesParametersAndStepArguments() throws {
        let spec = try parser.parse("scenario: s\nworkload: example\nsteps: [subscribe, burst]\n", file: "f.yaml")
        let catalog = WorkloadCatalog([ExampleWorkload()])
        let changed = try applyOverrides(["payloadSize=16KiB", "burst.duration=4s"], to: [spec], catalog: catalog)
        #expect(changed[0].parameters.bytes("payloadSize") == 16384)
        #expect(changed[0].strategies.allSatisfy { $0.parameters.bytes("payloadSize") == 16384 })
        #expect(changed[0].steps[1].arguments.duration("duration") == .seconds(4))
        #expect(throws: ScenarioError.self) { try applyOverrides(["payloadSize=huge"], to: [spec], catalog: catalog) }
        #expect(throws: ScenarioError.self) { try applyOverrides(["nothing=1"], to: [spec], catalog: catalog) }
        #expect(throws: ScenarioError.self) { try applyOverrides(["burst.speed=1"], to: [spec], catalog: catalog) }
    }

    @Test func peakModeComesFromTheFileUnlessTheRunSaysOtherwise() throws {
        let exact = try parser.parse("scenario: s\nworkload: example\npeak: exact\n", file: "f.yaml")
        let unsaid = try parser.parse("scenario: t\nworkload: example\n", file: "g.yaml")
        #expect(exact.peakMode == .exact)
        #expect(unsaid.peakMode == nil)
        #expect(
            [exact, unsaid].flatMap { RunPlanner.cases(of: $0, options: RunOptions(repetitions: 1)) }.map(\.peakMode)
                == [.exact, .exact, .sampled, .sampled])
        var sampled = RunOptions()
        sampled.peakMode = .sampled
        #expect(RunPlanner.cases(of: exact, options: sampled).allSatisfy { $0.peakMode == .sampled })
        var forced = RunOptions()
        forced.peakMode = .exact
        #expect(RunPlanner.cases(of: unsaid, options: forced).allSatisfy { $0.peakMode == .exact })
        #expect(
            diagnostics("scenario: s\nworkload: example\npeak: exakt\n") == [
                "Scenarios/x.yaml:3:7: bad value 'exakt' for 'peak'; expected one of: sampled, exact (did you mean "
                    + "'exact'?)"
            ])
    }

    @Test func quickModeRunsOnceWithQuarterDurations() throws {
        let spec = try parser.parse(
            "scenario: s\nworkload: example\nsteps: [{burst: 4s}]\nrepetitions: 3\n", file: "f.yaml")
        let full = RunPlanner.cases(of: spec, options: RunOptions())
        let quick = RunPlanner.cases(of: spec, options: RunOptions(quick: true))
        #expect(full.count == 6)
        #expect(full.map(\.strategy).prefix(2) == ["unbounded-dispatch", "signal-next"])
        #expect(quick.count == 2)
        #expect(quick[0].steps[0].arguments.duration("duration") == .seconds(1))
    }
}

struct ThresholdParserTests {
    let parser = ScenarioParser(catalog: WorkloadCatalog([ExampleWorkload()]))
    let head = "scenario: s\nworkload: example\nsteps: [subscribe, burst]\n"

    @Test func readsGroupedAndRelativeThresholds() throws {
        let spec = try parser.parse(
            head + """
                thresholds:
                  signal-next:
                    peakAllocated: <= 32MiB
                    phases.burst.peakAllocated: < 40MiB
                    metrics.callbacks: == 0
                  all:
                    residue: <= 256KiB
                  relative:
                    - signal-next.peakAllocated <= 0.1 * unbounded-dispatch.peakAllocated
                    - unbounded-dispatch.duration <= 2s
                """, file: "t.yaml")
        let texts = spec.thresholds.map(\.text)
        #expect(
            texts == [
                "signal-next.peakAllocated <= 32MiB", "signal-next.phases.burst.peakAllocated < 40MiB",
                "signal-next.metrics.callbacks == 0",
                "unbounded-dispatch.residue <= 256KiB", "signal-next.residue <= 256KiB",
                "signal-next.peakAllocated <= 0.1 * unbounded-dispatch.peakAllocated",
                "unbounded-dispatch.duration <= 2s",
            ])
        #expect(spec.thresholds[0].limit == .absolute(32 * 1_048_576))
        #expect(spec.thresholds[0].line == 6 && spec.thresholds[0].column == 20)
        #expect(
            spec.thresholds[5].limit
                == .relative(factor: 0.1, of: FigureReference(strategy: "unbounded-dispatch", figure: .peakAllocated)))
        #expect(spec.thresholds[6].limit == .absolute(2000))
    }

    @Test func rejectsUnknownStrategiesFiguresPhasesAndValues() {
        do {
            _ = try parser.parse(
                head + """
                    thresholds:
                      signal-nxt:
                        peakAllocated: <= 1MiB
                      signal-next:
                        phases.bust.peakAllocated: <= 1MiB
                        residue: <= lots
                        peakAllocated: 1MiB
                      relative:
                        - signal-next.peakAllocated <= 0.1 * unbounded.peakAllocated
                    """, file: "t.yaml")
            Issue.record("expected errors")
        } catch {
            guard case .invalid(let found) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(
                found.map(\.description) == [
                    "t.yaml:5:3: unknown threshold group 'signal-nxt'; expected one of: unbounded-dispatch, "
                        + "signal-next, all, relative (did you mean 'signal-next'?)",
                    "t.yaml:8:5: unknown phase 'bust' in 'phases.bust.peakAllocated'; phases: setup, subscribe, "
                        + "burst, teardown (did you mean 'burst'?)",
                    "t.yaml:9:14: bad limit 'lots' for residue; expected a size with a binary unit, e.g. 32MiB, "
                        + "256KiB, or 0, or a factor of another strategy's figure",
                    "t.yaml:10:20: '1MiB' needs a comparison first; expected one of: <=, <, >=, >, ==, e.g. '<= 32MiB'",
                    "t.yaml:12:7: unknown strategy 'unbounded' in '0.1 * unbounded.peakAllocated'; expected one of: "
                        + "unbounded-dispatch, signal-next (did you mean 'unbounded-dispatch'?)",
                ])
        }
    }
}
