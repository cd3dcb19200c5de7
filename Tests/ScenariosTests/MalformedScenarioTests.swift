import HarnessModel
import Runner
import Scenarios
import TestSupport
import Testing
import WorkloadKit

/// The malformed-input corpus for scenario files, one row per kind of mistake: the exact first
/// message (file:line:column of the offending token, the bad value shortened, the valid choices)
/// and at most ten lines in all. The command line turns every one of them into exit status 64
/// (`RunError.isUsageError`), before any case runs; `MalformedCommandLineTests` checks a sample end to end.
struct MalformedScenarioTests {
    static let catalog = WorkloadCatalog([ExampleWorkload()])
    let parser = ScenarioParser(catalog: Self.catalog)

    static let base = """
        scenario: s
        workload: example
        parameters:
          documents: 10
          payloadSize: 1KiB
        strategies: [signal-next, unbounded-dispatch]
        steps:
          - subscribe
          - burst: 1s

        """

    /// `base` with `old` replaced by `new` (which must be there).
    static func replacing(_ old: String, _ new: String) -> String {
        precondition(base.contains(old), old)
        return base.replacingOccurrences(of: old, with: new)
    }

    /// The problems of `text` as the command line prints them (one per line), or nil when it parses.
    func problems(_ text: String) -> String? {
        do {
            _ = try parser.parse(text, file: "x.yaml")
            return nil
        } catch {
            return error.description
        }
    }

    static let corpus: [(name: String, text: String, first: String)] = [
        // Structure
        ("empty file", "", "x.yaml:1:1: a scenario file is a mapping with keys: scenario, description, workload"),
        ("only a comment", "# nothing\n", "x.yaml:1:1: a scenario file is a mapping with keys: scenario"),
        ("a list at the top", "- a\n- b\n", "x.yaml:1:1: a scenario file is a mapping with keys: scenario"),
        ("missing scenario", replacing("scenario: s\n", ""), "x.yaml:1:1: missing required key 'scenario'"),
        (
            "scenario is a list", replacing("scenario: s", "scenario: [a]"),
            "x.yaml:1:11: 'scenario' takes a single value, not a list or mapping"
        ),
        (
            "unknown key", base + "strategie: x\n",
            "x.yaml:10:1: unknown key 'strategie'; expected one of: scenario, description, workload, parameters"
        ),
        (
            "unknown workload", replacing("workload: example", "workload: exampel"),
            "x.yaml:2:11: unknown workload 'exampel'; expected one of: example, command (did you mean 'example'?)"
        ),
        (
            "two documents", base + "---\n" + base,
            "x.yaml:10:1: a scenario file holds one YAML document; a second one starts here"
        ),
        // Duplicate keys: at the duplicate, with the first one's place, without the file
        (
            "duplicate top-level key", base + "scenario: again\n",
            "x.yaml:10:1: duplicate key 'scenario' (first at line 1, column 1); a key may appear once in a mapping"
        ),
        (
            "duplicate parameter", replacing("  documents: 10\n", "  documents: 10\n  documents: 20\n"),
            "x.yaml:5:3: duplicate key 'documents' (first at line 4, column 3); a key may appear once in a mapping"
        ),
        (
            "duplicate key in a flow mapping", base + "thresholds: {all: {residue: <= 1MiB, residue: <= 2MiB}}\n",
            "x.yaml:10:38: duplicate key 'residue' (first at line 10, column 20)"
        ),
        // Parameters and numbers
        (
            "bad size unit", replacing("1KiB", "64XB"),
            "x.yaml:5:16: bad value '64XB' for 'payloadSize'; expected a size with a binary unit, e.g. 4KiB, "
                + "1.5MiB, 512B"
        ),
        ("NaN size", replacing("1KiB", "nan"), "x.yaml:5:16: bad value 'nan' for 'payloadSize'; expected a size"),
        ("infinite size", replacing("1KiB", ".inf"), "x.yaml:5:16: bad value '.inf' for 'payloadSize'"),
        ("size beyond a double", replacing("1KiB", "1e400"), "x.yaml:5:16: bad value '1e400' for 'payloadSize'"),
        ("size beyond Int", replacing("1KiB", "99999999999GiB"), "x.yaml:5:16: bad value '99999999999GiB'"),
        (
            "size out of range", replacing("1KiB", "2GiB"),
            "x.yaml:5:16: value '2GiB' for 'payloadSize' is out of range; allowed: 0 B...1.00 GiB"
        ),
        (
            "count with a fraction", replacing("documents: 10", "documents: 1.5"),
            "x.yaml:4:14: bad value '1.5' for 'documents'; expected a whole number, e.g. 2000"
        ),
        (
            "count beyond Int", replacing("documents: 10", "documents: 99999999999999999999"),
            "x.yaml:4:14: bad value '99999999999999999999' for 'documents'"
        ),
        (
            "NaN rate", replacing("  payloadSize: 1KiB\n", "  payloadSize: 1KiB\n  writeRate: nan/s\n"),
            "x.yaml:6:14: bad value 'nan/s' for 'writeRate'; expected a rate, e.g. 500/s, 30/min"
        ),
        (
            "infinite rate", replacing("  payloadSize: 1KiB\n", "  payloadSize: 1KiB\n  writeRate: inf/s\n"),
            "x.yaml:6:14: bad value 'inf/s' for 'writeRate'"
        ),
        (
            "rate that overflows", replacing("  payloadSize: 1KiB\n", "  payloadSize: 1KiB\n  writeRate: 1e308/ms\n"),
            "x.yaml:6:14: bad value '1e308/ms' for 'writeRate'"
        ),
        (
            "NaN share", replacing("  payloadSize: 1KiB\n", "  payloadSize: 1KiB\n  matchingShare: nan%\n"),
            "x.yaml:6:18: bad value 'nan%' for 'matchingShare'; expected a share, e.g. 50% or 0.5"
        ),
        (
            "hexadecimal share", replacing("  payloadSize: 1KiB\n", "  payloadSize: 1KiB\n  matchingShare: 0x1p-1\n"),
            "x.yaml:6:18: bad value '0x1p-1' for 'matchingShare'"
        ),
        (
            "share out of range", replacing("  payloadSize: 1KiB\n", "  payloadSize: 1KiB\n  matchingShare: 150%\n"),
            "x.yaml:6:18: value '150%' for 'matchingShare' is out of range; allowed: 0%...100%"
        ),
        (
            "negative duration", replacing("burst: 1s", "burst: -1s"),
            "x.yaml:9:12: bad value '-1s' for 'burst.duration'; expected a duration, e.g. 5ms, 3s, 200us"
        ),
        (
            "duration beyond Int64", replacing("burst: 1s", "burst: 99999999999min"),
            "x.yaml:9:12: bad value '99999999999min' for 'burst.duration'"
        ),
        (
            "a long bad value is shortened", replacing("1KiB", String(repeating: "9", count: 5000) + "XB"),
            "x.yaml:5:16: bad value '9999999999999999999999999999999999999999… (5002 characters)' for 'payloadSize'"
        ),
        // Strategies and steps
        (
            "unknown strategy", replacing("[signal-next,", "[signal-nxt,"),
            "x.yaml:6:14: unknown strategy 'signal-nxt'; expected one of: unbounded-dispatch, signal-next (did you "
                + "mean 'signal-next'?)"
        ),
        (
            "unknown step", replacing("  - subscribe", "  - subscrbe"),
            "x.yaml:8:5: unknown step 'subscrbe'; expected one of: subscribe, burst, idle, settle, repeat (did you "
                + "mean 'subscribe'?)"
        ),
        (
            "repeat without enough iterations",
            replacing("  - subscribe", "  - repeat: {times: 3, warmup: 2, steps: [subscribe]}"),
            "x.yaml:8:5: 'repeat' runs 3 iterations with 2 of warm-up, leaving 1 to fit the growth line; it needs "
                + "at least 3"
        ),
        (
            "repetitions zero", base + "repetitions: 0\n",
            "x.yaml:10:14: 'repetitions' 0 is out of range; allowed: 1...100"
        ),
        (
            "repetitions NaN", base + "repetitions: .nan\n",
            "x.yaml:10:14: bad value '.nan' for 'repetitions'; expected a whole number in 1...100, `auto`, or a mapping"
        ),
        (
            "timeout zero", base + "timeout: 0s\n",
            "x.yaml:10:10: value '0s' for 'timeout' is out of range; allowed: 100.00 ms...3600.00 s"
        ),
        (
            "memory limit NaN", base + "memoryLimit: nan\n",
            "x.yaml:10:14: bad value 'nan' for 'memoryLimit'; expected a size from 1MiB to 1TiB"
        ),
        // Thresholds
        (
            "unknown metric", base + "thresholds:\n  signal-next:\n    metrics.calbacks: <= 5\n",
            "x.yaml:12:5: unknown metric 'calbacks' in 'metrics.calbacks'; the workload's metrics: callbacks, "
                + "staleness (did you mean 'callbacks'?)"
        ),
        (
            "unknown metric in an expression", base + "thresholds:\n  - signal-next.metrics.nope <= 5\n",
            "x.yaml:11:5: unknown metric 'nope' in 'metrics.nope'; the workload's metrics: callbacks, staleness"
        ),
        (
            "unknown metric in a relative limit",
            base + "thresholds:\n  - signal-next.metrics.callbacks <= 2 * unbounded-dispatch.metrics.nope\n",
            "x.yaml:11:5: unknown metric 'nope' in 'metrics.nope'"
        ),
        (
            "NaN metric limit", base + "thresholds:\n  signal-next:\n    metrics.callbacks: <= nan\n",
            "x.yaml:12:24: bad limit 'nan' for metrics.callbacks; expected a number"
        ),
        (
            "infinite metric limit", base + "thresholds:\n  signal-next:\n    metrics.callbacks: <= inf\n",
            "x.yaml:12:24: bad limit 'inf' for metrics.callbacks; expected a number"
        ),
        (
            "metric limit beyond a double", base + "thresholds:\n  signal-next:\n    metrics.callbacks: <= 1e400\n",
            "x.yaml:12:24: bad limit '1e400' for metrics.callbacks"
        ),
        (
            "NaN size limit", base + "thresholds:\n  signal-next:\n    peakAllocated: <= nan\n",
            "x.yaml:12:20: bad limit 'nan' for peakAllocated; expected a size with a binary unit"
        ),
        (
            "infinite factor",
            base + "thresholds:\n  - signal-next.peakAllocated <= inf * unbounded-dispatch.peakAllocated\n",
            "x.yaml:11:5: bad factor 'inf' in 'inf * unbounded-dispatch.peakAllocated'; expected a number from 0 to "
                + "1000000"
        ),
        (
            "factor beyond a double",
            base + "thresholds:\n  - signal-next.peakAllocated <= 1e400 * unbounded-dispatch.peakAllocated\n",
            "x.yaml:11:5: bad factor '1e400'"
        ),
        (
            "NaN factor",
            base + "thresholds:\n  - signal-next.peakAllocated <= nan * unbounded-dispatch.peakAllocated\n",
            "x.yaml:11:5: bad factor 'nan'"
        ),
        (
            "unknown figure", base + "thresholds:\n  signal-next:\n    peakAlocated: <= 1MiB\n",
            "x.yaml:12:5: unknown figure 'peakAlocated'; expected one of: duration, exactPeak"
        ),
        (
            "unquoted >", base + "thresholds:\n  signal-next:\n    peakAllocated: > 5MiB\n",
            "x.yaml:12:22: invalid YAML: did not find expected comment or line break (while scanning a block scalar "
                + "at 12:20); a value starting with '>' or '|' begins a block of text: quote it, e.g. '> 5MiB'"
        ),
        // YAML
        (
            "tab indentation", replacing("  documents", "\tdocuments"),
            "x.yaml:4:1: invalid YAML: found character that cannot start any token (while scanning for the next "
                + "token); indent with spaces, not tabs"
        ),
        (
            "unclosed flow list", replacing("[signal-next, unbounded-dispatch]", "[signal-next, unbounded-dispatch"),
            "x.yaml:7:6: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence at 6:13)"
        ),
        (
            "unclosed quote", replacing("scenario: s", "scenario: \"s"),
            "x.yaml:10:1: invalid YAML: found unexpected end of stream (while scanning a quoted scalar at 1:11)"
        ),
        (
            "a NUL byte", replacing("scenario: s", "scenario: s\u{0}"),
            "x.yaml:1:12: invalid YAML: control characters are not allowed"
        ),
        (
            "an alias to nothing", replacing("scenario: s", "scenario: *nope"),
            "x.yaml:1:11: alias '*nope' names no anchor defined before it; define it first with '&nope'"
        ),
        (
            "an alias to itself", replacing("scenario: s", "scenario: &s [*s]"),
            "x.yaml:1:15: alias '*s' names no anchor defined before it; define it first with '&s'"
        ),
    ]

    @Test(arguments: Self.corpus)
    func refusesWithThePlaceAndAShortMessage(name: String, text: String, first: String) throws {
        let message = try #require(problems(text), "\(name) was accepted")
        let lines = message.split(separator: "\n")
        #expect(lines.first.map { $0.hasPrefix(first) } == true, "\(name): \(message)")
        #expect(lines.count <= ScenarioError.maximumLines, "\(name)")
        #expect(lines.allSatisfy { $0.hasPrefix("x.yaml:") || $0.hasPrefix("...") }, "\(name): \(message)")
        #expect(message.count < 2_000, "\(name): \(message.count) characters")
    }

    @Test func validFilesWithAnchorsCRLFAndDirectivesAreRead() throws {
        let anchored = Self.replacing(
            "  payloadSize: 1KiB\n", "  payloadSize: &size 1KiB\nstrategies2: x\n"
        ).replacingOccurrences(of: "strategies2: x\n", with: "")
        _ = try parser.parse(anchored, file: "x.yaml")
        let crlf = Self.base.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try parser.parse(crlf, file: "x.yaml").name == "s")
        #expect(try parser.parse("%YAML 1.1\n---\n" + Self.base + "...\n", file: "x.yaml").name == "s")
        // A duplicate is found wherever it is, with the place of a CRLF file right.
        let duplicate = (Self.base + "scenario: again\n").replacingOccurrences(of: "\n", with: "\r\n")
        #expect(problems(duplicate)?.hasPrefix("x.yaml:10:1: duplicate key 'scenario'") == true)
    }

    @Test func manyProblemsAreCutToTenLines() throws {
        let text = Self.base + (1...40).map { "unknown\($0): x\n" }.joined()
        let message = try #require(problems(text))
        let lines = message.split(separator: "\n")
        #expect(lines.count == 10)
        #expect(lines.last == "... and 31 more problems; fix these first")
    }
}

/// Hostile YAML: what would hang or exhaust the parser is refused at the token that causes it, in
/// time linear in the file.
@Suite(.timeLimit(.minutes(1)))
struct HostileYAMLTests {
    let parser = ScenarioParser(catalog: MalformedScenarioTests.catalog)

    func first(_ text: String) -> String {
        do {
            _ = try parser.parse(text, file: "x.yaml")
            return "accepted"
        } catch {
            return String(error.description.split(separator: "\n").first ?? "")
        }
    }

    /// Nine levels of nine aliases: 387 million nodes once expanded.
    static let laughs =
        "lol0: &lol0 [lol]\n"
        + (1...9).map { level in
            "lol\(level): &lol\(level) [" + Array(repeating: "*lol\(level - 1)", count: 9).joined(separator: ", ")
                + "]\n"
        }.joined()

    @Test func anAliasBombAsAValueIsRefusedAtTheAliasThatCrossesTheLimit() {
        #expect(
            first(Self.laughs + MalformedScenarioTests.base)
                == "x.yaml:6:56: alias '*lol4' expands the document beyond 100000 nodes (13942 here); aliases of "
                + "aliases multiply: refused as an alias bomb"
        )
    }

    @Test func anAliasBombAsAKeyIsRefusedBeforeYamsHashesIt() {
        // Composing this hashes the key in full to look for duplicates: exponential time.
        let small =
            "a: &a [x, x]\n"
            + (1...60).map { "b\($0): &b\($0) [*\($0 == 1 ? "a" : "b\($0 - 1)"), *\($0 == 1 ? "a" : "b\($0 - 1)")]\n" }
            .joined()
        let text = small + "? *b60\n: boom\n"
        #expect(first(text).hasPrefix("x.yaml:"))
        #expect(first(text).contains("refused as an alias bomb"))
        #expect(first(MalformedScenarioTests.base + "boom: {*lol9 : 1}\n").contains("names no anchor"))
        #expect(first(Self.laughs + "boom: {*lol9 : 1}\n").contains("refused as an alias bomb"))
    }

    @Test func aliasesAreCounted() {
        let text = "a: &a x\n" + (1...101).map { "k\($0): *a\n" }.joined()
        #expect(
            first(text)
                == "x.yaml:102:7: more than 100 aliases; a scenario file may use at most 100 (write the values out "
                + "instead)"
        )
    }

    @Test func nestingIsLimited() {
        let deep = "deep: " + String(repeating: "[", count: 33) + String(repeating: "]", count: 33) + "\n"
        #expect(
            first(deep)
                == "x.yaml:1:38: nested deeper than 32 levels of lists and mappings; a scenario file needs fewer "
                + "than 10"
        )
        let deeper = "deep: " + String(repeating: "[", count: 100_000) + "\n"
        #expect(
            first(deeper).hasSuffix(
                "nested deeper than 32 levels of lists and mappings; a scenario file needs fewer than 10"))
        let block = "deep:\n" + (1...40).map { String(repeating: " ", count: $0) + "k\($0):\n" }.joined()
        #expect(first(block).contains("nested deeper than 32 levels"))
    }

    @Test func nodesAreCounted() {
        let wide = "big: [" + Array(repeating: "1", count: 100_001).joined(separator: ",") + "]\n"
        #expect(first(wide).hasSuffix("the document has more than 100000 nodes; a scenario file needs a few hundred"))
    }

    @Test func theLimitsLeaveRoomForRealFiles() throws {
        // Anchors shared between strategies, and the deepest structure a scenario has (a repeat in a step).
        let text = """
            scenario: s
            workload: example
            parameters: &shared
              documents: 10
            strategies:
              - {name: signal-next, parameters: *shared}
              - {name: unbounded-dispatch, parameters: *shared}
            steps:
              - repeat: {times: 5, warmup: 1, steps: [subscribe, {burst: {duration: 1ms, phase: b}}]}

            """
        #expect(try parser.parse(text, file: "x.yaml").strategies.count == 2)
    }
}

/// `--set` values get the checks a file's values get.
struct OverrideValidationTests {
    let catalog = MalformedScenarioTests.catalog
    let parser = ScenarioParser(catalog: MalformedScenarioTests.catalog)

    func refusal(_ overrides: [String], steps: String = "[subscribe, burst]") throws -> String {
        let spec = try parser.parse("scenario: s\nworkload: example\nsteps: \(steps)\n", file: "x.yaml")
        do {
            _ = try applyOverrides(overrides, to: [spec], catalog: catalog)
            return "accepted"
        } catch {
            return error.description
        }
    }

    @Test func aSweepTakesAtMostAHundredValues() throws {
        let values = (1...101).map { "\($0)KiB" }
        do {
            _ = try SweepSpec(parsing: "payloadSize=" + values.joined(separator: ","))
            Issue.record("a sweep of 101 values was accepted")
        } catch {
            #expect(
                error.description.hasSuffix("a sweep of 101 values; at most 100 (each value runs every case again)"))
            #expect(error.description.count < 200, "the command line is shortened: \(error.description)")
        }
        #expect(try SweepSpec(parsing: "payloadSize=" + values.dropLast().joined(separator: ",")).values.count == 100)
    }

    @Test func aRepeatOverrideIsHeldToTheFilesRule() throws {
        let steps = "[{repeat: {times: 6, warmup: 2, steps: [subscribe]}}]"
        #expect(try refusal(["repeat.times=7"], steps: steps) == "accepted")
        #expect(
            try refusal(["repeat.times=4"], steps: steps)
                == "--set 'repeat.times=4': x.yaml: 'repeat' runs 4 iterations with 2 of warm-up, leaving 2 to fit "
                + "the growth line; it needs at least 3: raise 'times' to 5 or lower 'warmup'"
        )
        #expect(try refusal(["repeat.warmup=5"], steps: steps).contains("leaving 1 to fit the growth line"))
    }

    @Test(arguments: [
        (
            "payloadSize=nan",
            "--set 'payloadSize=nan': bad value 'nan' for 'payloadSize'; expected a size with a binary unit"
        ),
        ("payloadSize=1e400", "--set 'payloadSize=1e400': bad value '1e400' for 'payloadSize'"),
        ("writeRate=inf/s", "--set 'writeRate=inf/s': bad value 'inf/s' for 'writeRate'"),
        ("matchingShare=nan", "--set 'matchingShare=nan': bad value 'nan' for 'matchingShare'"),
        ("burst.duration=-1s", "--set 'burst.duration=-1s': bad value '-1s' for 'burst.duration'"),
        (
            "payloadSiz=1KiB",
            "--set 'payloadSiz=1KiB': s has no parameter 'payloadSiz'; parameters: documents, payloadSize"
        ),
        ("subscribe.duration=1s", "--set 'subscribe.duration=1s': step 'subscribe' of s takes no arguments"),
        ("burst.speed=1", "--set 'burst.speed=1': step 'burst' of s has no argument 'speed'; arguments: duration"),
        (
            "brust.duration=1s",
            "--set 'brust.duration=1s': s has no step 'brust'; steps: subscribe, burst (did you mean 'burst'?)"
        ),
        ("a.b.c=1", "--set 'a.b.c=1': 'a.b.c' is neither a parameter nor STEP.ARGUMENT, e.g. burst.duration"),
        ("=1", "--set '=1': expected NAME=VALUE"),
    ])
    func badValuesAndNamesAreRefused(override: String, message: String) throws {
        #expect(try refusal([override]).hasPrefix(message))
    }
}
