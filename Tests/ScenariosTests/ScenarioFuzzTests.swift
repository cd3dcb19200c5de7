import Foundation
import HarnessModel
import Runner
import Scenarios
import TestSupport
import Testing
import WorkloadKit

/// Property tests of the scenario parser: thousands of mutations of valid files (bytes flipped,
/// truncated, numbers replaced by NaN, infinities and values out of range, keys swapped, lines
/// repeated, anchors, aliases and nesting inserted) and thousands of generated thresholds. The
/// property: a spec whose every value is in range, or `ScenarioError.invalid` whose every line has a
/// place, in at most ten lines; never a trap or a hang. Deterministic by seed; set
/// `MEMHARNESS_FUZZ_DUMP` to a path to have each input written there before it is parsed.
@Suite(.timeLimit(.minutes(2)))
struct ScenarioFuzzTests {
    static let inputs = ProcessInfo.processInfo.environment["MEMHARNESS_FUZZ_INPUTS"].flatMap { Int($0) } ?? 10_000
    let parser = ScenarioParser(catalog: MalformedScenarioTests.catalog)

    static let bases = [
        MalformedScenarioTests.base,
        """
        scenario: full
        description: >
          Every kind of value, for the fuzz test.
        workload: example
        parameters: &shared
          documents: 2000
          payloadSize: 8KiB
          writeRate: 250/s
          consumerWork: 2ms
          matchingShare: 25%
          verbose: true
          mode: sleep
        strategies:
          - unbounded-dispatch
          - name: signal-next
            expect: leak-free
            parameters: {payloadSize: 1KiB}
        steps:
          - subscribe
          - burst: 3s
          - repeat: {times: 6, warmup: 2, settle: 1ms, steps: [subscribe, {burst: {duration: 5ms, phase: b}}]}
          - idle: 200ms
          - settle
        repetitions: 5
        interval: 2ms
        timeout: 30s
        settle: 50ms
        memoryLimit: 256MiB
        memoryWarning: 80%
        peak: exact
        thresholds:
          signal-next:
            peakAllocated: <= 32MiB
            phases.burst.peakAllocated: < 40MiB
            metrics.callbacks: ">= 1"
          all:
            residue: <= 256KiB
          relative:
            - signal-next.peakAllocated <= 0.1 * unbounded-dispatch.peakAllocated
            - unbounded-dispatch.duration <= 2s

        """,
    ]

    static let fragments = [
        "&a ", "*a", "? *a\n: x\n", "<<: *a\n", "[[[[[[[[", "{a: 1, a: 2}", "lol: &l [x, x]\n", "!!binary ",
        "---\n", "%YAML 1.1\n", ": ", "- ", "\"", "'", "|\n", ">\n", "# ", "\t", "\u{0}", "\u{FEFF}", "é", "\r",
    ]

    /// The property every outcome of the parser must have.
    func check(_ text: String, index: Int) {
        do {
            let spec = try parser.parse(text, file: "x.yaml")
            // An accepted spec plans without a trap, and its values are what the checks allow.
            _ = RunPlanner.cases(of: spec, options: RunOptions())
            #expect((1...100).contains(spec.repetitions.minimum) && spec.repetitions.maximum <= 100, "input \(index)")
            for threshold in spec.thresholds {
                switch threshold.limit {
                case .absolute(let value): #expect(value.isFinite, "input \(index)")
                case .relative(let factor, _): #expect(factor.isFinite && factor >= 0, "input \(index)")
                }
            }
            for value in spec.parameters.values.values {
                if let number = value.baseUnitValue { #expect(number.isFinite, "input \(index)") }
            }
        } catch {
            let lines = error.description.split(separator: "\n")
            #expect(!lines.isEmpty && lines.count <= ScenarioError.maximumLines, "input \(index): \(error)")
            guard case .invalid(let diagnostics) = error else {
                Issue.record("input \(index): \(error)")
                return
            }
            for diagnostic in diagnostics {
                #expect(diagnostic.location.line >= 1 && diagnostic.location.column >= 1, "input \(index)")
                #expect(!diagnostic.message.isEmpty && diagnostic.message.count < 800, "input \(index): \(diagnostic)")
            }
        }
    }

    @Test func mutatedScenarioFilesParseOrFailWithPlaces() {
        var random = FuzzRandom(seed: 0x5EED_0101)
        let bases = Self.bases.map { Array($0.utf8) }
        let dump = ProcessInfo.processInfo.environment["MEMHARNESS_FUZZ_DUMP"]
        for index in 0..<Self.inputs {
            var bytes = random.pick(bases)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                bytes = Mutation.mutate(bytes, fragments: Self.fragments, using: &random)
            }
            // The file reader refuses what is not UTF-8; what reaches the parser is text.
            let text = String(decoding: bytes, as: UTF8.self)
            if let dump { _ = FileManager.default.createFile(atPath: dump, contents: Data(text.utf8)) }
            check(text, index: index)
        }
    }

    /// The least a file needs around its thresholds: every parse composes and checks all of it.
    static let thresholdHead = "scenario: s\nworkload: example\nsteps: [subscribe, burst]\nthresholds:\n"

    @Test func generatedThresholdsParseOrFailWithPlaces() {
        var random = FuzzRandom(seed: 0x5EED_0102)
        let subjects = ["signal-next", "unbounded-dispatch", "all", "signal-nxt", "", "relative"]
        let figures = [
            "peakAllocated", "residue", "duration", "leakedObjects", "exactPeak", "phases.burst.peakAllocated",
            "phases.nope.peakAllocated", "metrics.callbacks", "metrics.staleness", "metrics.nope", "metrics.", "peak",
        ]
        let comparisons = ["<=", "<", ">=", ">", "==", "=<", "", "!="]
        let numbers = Mutation.hostileNumbers + ["32MiB", "1.5GiB", "2s", "500ms", "0", "12", "1e3", "64XB"]
        for index in 0..<Self.inputs {
            let figure = random.pick(figures)
            let comparison = random.pick(comparisons)
            var limit = random.pick(numbers)
            if random.chance(0.3) {
                limit = "\(random.pick(numbers)) * \(random.pick(subjects)).\(random.pick(figures))"
            }
            let line: String
            if random.chance(0.5) {
                line = "  \(random.pick(subjects)):\n    \(figure): \"\(comparison) \(limit)\"\n"
            } else {
                line = "  - \"\(random.pick(subjects)).\(figure) \(comparison) \(limit)\"\n"
            }
            check(Self.thresholdHead + line, index: index)
        }
    }

    @Test func generatedOverridesApplyOrFail() throws {
        var random = FuzzRandom(seed: 0x5EED_0103)
        let spec = try parser.parse(Self.bases[1], file: "x.yaml")
        let names = [
            "documents", "payloadSize", "writeRate", "consumerWork", "matchingShare", "verbose", "mode",
            "burst.duration",
            "repeat.times", "repeat.warmup", "repeat.settle", "b.duration", "idle.duration", "nope", "burst.nope",
            "a.b.c",
            "",
        ]
        let values = Mutation.hostileNumbers + ["1KiB", "3s", "10/s", "50%", "true", "cpu", "7", "2", "", "1,2"]
        for index in 0..<Self.inputs {
            let override = "\(random.pick(names))=\(random.pick(values))"
            do {
                let changed = try applyOverrides([override], to: [spec], catalog: MalformedScenarioTests.catalog)
                for step in changed[0].steps where step.name == "repeat" {
                    #expect(step.arguments.count("times") - step.arguments.count("warmup") >= 3, "input \(index)")
                }
            } catch {
                #expect(error.description.hasPrefix("--set '"), "input \(index): \(error)")
                #expect(!error.description.contains("\n"), "input \(index): \(error)")
            }
        }
    }
}
