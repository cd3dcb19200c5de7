import FileIO
import Foundation
import HarnessModel
import Reports
import Testing
import WorkloadKit

/// Drives the example package (Examples/JSONCache) the way a user does: its harness executable, built by
/// `make test` in the example's own `.build`, and `swift package memharness` (the plugin).
@Suite(.serialized, .timeLimit(.minutes(10)))
struct JSONCacheExampleTests {
    /// The parameters of the measured run, chosen here (not the scenario file's) so the truth below is
    /// computed from what this test asked for.
    static let responseSize = 12 << 10
    static let cacheBudget = 3 << 20
    static let articles = 600
    static let revisits = 200

    /// Response bytes each strategy holds at its top, in jemalloc size classes: every response is one
    /// allocation of `responseSize` bytes. `keep-forever` holds all of them; `lru-budget` as many whole
    /// responses as fit in the budget.
    static var heldResponses: [String: Int] {
        ["keep-forever": articles, "lru-budget": min(articles, cacheBudget / responseSize)]
    }

    /// How far above the truth a peak may be: a share for the cache's bookkeeping per response (Data's
    /// storage object, a hash-table slot, an LRU slot, with the power-of-two growth of both tables: ~1-2%
    /// next to a 12 KiB response) and a fixed allowance for the request in flight at the top (the response
    /// being built and copied into a Data, the decoder's copies) and the harness's own noise. Measured here:
    /// keep-forever +1.5% (16 KiB responses), lru-budget +154 KiB over 4 MiB and +172 KiB over 3 MiB.
    static let toleranceShare = 0.05
    static let toleranceBytes = 128 << 10

    @Test func runRanksTheStrategiesWithPeaksMatchingWhatTheCacheHolds() throws {
        try #require(ExamplePaths.missingHarness == nil, "\(ExamplePaths.missingHarness ?? "")")
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let outcome = try runTool(
            ExamplePaths.harness,
            [
                "run", ExamplePaths.example.appendingPathComponent("Scenarios/json-cache.yaml").path,
                "--out", out.path, "--repeat", "1",
                "--set", "responseSize=\(Self.responseSize)B", "--set", "cacheBudget=\(Self.cacheBudget)B",
                "--set", "browse.count=\(Self.articles)", "--set", "revisit.count=\(Self.revisits)",
            ],
            timeout: .seconds(180))
        #expect(outcome.status == 0, "every check of the scenario passes: \(outcome.output)")

        let rows = CSVTable.parse(try String(contentsOf: out.appendingPathComponent("summary.csv"), encoding: .utf8))
        let header = try #require(rows.first)
        func column(_ name: String) throws -> Int { try #require(header.firstIndex(of: name), "no column \(name)") }
        let strategy = try column("strategy")
        // The measured cases; a strategy with `expect:` also has the case that captured its heap, in instrumented.csv.
        #expect(header.firstIndex(of: "instrumentation") == nil)
        let measured = Array(rows.dropFirst())
        let instrumented = CSVTable.parse(
            try String(contentsOf: out.appendingPathComponent("instrumented.csv"), encoding: .utf8))
        #expect(
            instrumented.dropFirst().map { $0[strategy] }.sorted() == ["keep-forever", "lru-budget"]
                && instrumented.first?.contains("instrumentation") == true,
            "one heap case per strategy with an expectation")
        let byStrategy = Dictionary(measured.map { ($0[strategy], $0) }, uniquingKeysWith: { first, _ in first })
        #expect(Set(byStrategy.keys) == ["keep-forever", "lru-budget"])
        let responseClassBytes = AllocatorCost.bytes(forRequest: Self.responseSize)
        var peaks: [String: Int] = [:]
        for (name, held) in Self.heldResponses {
            let row = try #require(byStrategy[name])
            #expect(row[try column("status")] == "ok")
            #expect(row[try column("leak_verdict")] == "leak-free")
            let peak = try #require(Int(row[try column("peak_allocated_net_bytes")]))
            peaks[name] = peak
            let truth = held * responseClassBytes
            let limit = truth + Int(Double(truth) * Self.toleranceShare) + Self.toleranceBytes
            let floor = try #require(Int(row[try column("peak_uncertainty_bytes")]))
            #expect(
                peak >= truth - floor, "\(name): peak \(peak) ± \(floor) below the \(truth) bytes of responses it holds"
            )
            #expect(peak <= limit, "\(name): peak \(peak) vs truth \(truth): +\(peak - truth) B, limit \(limit)")
            // The workload's own figures are exact: what the cache holds, in JSON bytes and responses.
            #expect(row[try column("metric.peakCachedBytes_bytes")] == String(held * Self.responseSize))
            #expect(row[try column("metric.peakCachedResponses")] == String(held))
            #expect(row[try column("metric.requests")] == String(Self.articles + Self.revisits))
        }
        let lruEvictions = try #require(byStrategy["lru-budget"]?[try column("metric.evictions")])
        #expect(lruEvictions == String(Self.articles - (Self.heldResponses["lru-budget"] ?? 0)))

        // The leak probe sees what the workload tracks (one cache and one client per case), and none survives.
        let record = try ReportFolder.read(out.path)
        let cases = record.report.scenarios.flatMap(\.cases)
        #expect(cases.count == 2)
        for result in cases {
            let measurements = try #require(result.completed, "\(result.label) did not complete")
            let leaks = try #require(measurements.leaks, "\(result.label) has no leak evidence")
            #expect(
                leaks.tracked == [
                    TypeCount(typeName: "ArticleClient", count: 1), TypeCount(typeName: "ResponseCache", count: 1),
                ], "\(result.label)")
            #expect(leaks.survivors.isEmpty, "\(result.label)")
        }

        // Ranked by peak allocated: the budget first.
        #expect((peaks["lru-budget"] ?? .max) < (peaks["keep-forever"] ?? 0))
        let report = try String(contentsOf: out.appendingPathComponent("report.md"), encoding: .utf8)
        #expect(report.contains("| 1 | `lru-budget` |"), "report.md ranks lru-budget first")
        #expect(report.contains("| 2 | `keep-forever` |"))
    }

    @Test func listShowsTheWorkloadWithItsUnits() throws {
        try #require(ExamplePaths.missingHarness == nil, "\(ExamplePaths.missingHarness ?? "")")
        let outcome = try runTool(ExamplePaths.harness, ["list"], timeout: .seconds(30))
        #expect(outcome.status == 0)
        #expect(outcome.stdout.contains("json-cache: Articles from a JSON API"))
        #expect(outcome.stdout.contains("keep-forever"))
        #expect(outcome.stdout.contains("responseSize               default 16.00 KiB, range 256 B...1.00 MiB."))
        #expect(outcome.stdout.contains("peakCachedBytes"))
    }

    @Test func aStrategyTheWorkloadDoesNotDeclareExits64WithItsPlaceBeforeAnyRun() throws {
        try #require(ExamplePaths.missingHarness == nil, "\(ExamplePaths.missingHarness ?? "")")
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let file = ExamplePaths.fixtures.appendingPathComponent("json-cache-typo.yaml").path
        let outcome = try runTool(ExamplePaths.harness, ["run", file, "--out", out.path], timeout: .seconds(30))
        #expect(outcome.status == 64)
        #expect(
            outcome.stderr.contains(
                "\(file):7:5: unknown strategy 'lru-budgt'; expected one of: keep-forever, lru-budget "
                    + "(did you mean 'lru-budget'?)"), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("summary.csv").path))
    }

    @Test func aWorkloadRegisteredTwiceExits64BeforeAnything() throws {
        let outcome = try runTool(ExamplePaths.built("duplicate-workloads"), ["list"], timeout: .seconds(30))
        #expect(outcome.status == 64)
        #expect(
            outcome.stderr.contains(
                "workload 'calibration' is registered more than once; each workload needs its own name"),
            "\(outcome.stderr)")
        #expect(outcome.stdout.isEmpty, "nothing ran: \(outcome.stdout)")
    }
}

/// The example's own `swift test` with memory expectations (MemHarnessTesting), as its user runs it.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct JSONCacheMemoryExpectationTests {
    @Test func aDeliberatelyTightLimitFailsSwiftTestWithAReadableMessage() throws {
        try #require(ExamplePaths.missingTests == nil, "\(ExamplePaths.missingTests ?? "")")
        let outcome = try swiftTest(
            ExamplePaths.example, ["--filter", "CacheMemoryTests/aDeliberatelyTightLimit"],
            environment: ["JSONCACHE_SHOW_MEMORY_FAILURE": "1"])
        #expect(!outcome.timedOut)
        #expect(outcome.status != 0, "the broken limit fails the run: \(outcome.output)")
        // 400 responses of 8 KiB held at once (3.13 MiB of JSON, plus the cache's bookkeeping) against 1 MiB.
        #expect(
            outcome.output.contains("✘ Test aDeliberatelyTightLimit() recorded an issue at CacheMemoryTests.swift:"))
        #expect(
            outcome.output.contains("peak 3.")
                && outcome.output.contains(" MiB above the start, over the 1 MiB limit by 2."),
            "\(outcome.output)")
        #expect(outcome.output.contains("hold less at once (stream or page the work, release what is done early)"))
    }

    @Test func theRightLimitsPassAndTheTightOneIsAKnownIssue() throws {
        try #require(ExamplePaths.missingTests == nil, "\(ExamplePaths.missingTests ?? "")")
        let outcome = try swiftTest(ExamplePaths.example, ["--filter", "CacheMemoryTests"])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.output.contains("✔ Test anLRUBudgetKeepsThePeakNearItsBudgetAndLeavesNothing() passed"))
        #expect(outcome.output.contains("Suite CacheMemoryTests passed after"))
        #expect(outcome.output.contains("with 1 known issue"))
        #expect(!outcome.output.contains("aDeliberatelyTightLimit() started"), "skipped without the variable")
    }
}

/// `swift package memharness` on the example and on a package without a harness.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct MemHarnessPluginTests {
    static let allow = "--allow-writing-to-package-directory"

    @Test func runBuildsTheHarnessAndRunsThePackagesScenariosIntoItsReportsFolder() throws {
        try #require(ExamplePaths.missingHarness == nil, "\(ExamplePaths.missingHarness ?? "")")
        let report = ExamplePaths.example.appendingPathComponent("Reports/latest")
        try? FileManager.default.removeItem(at: report)
        // Debug: the build `make test` made; the plugin builds the agent beside it.
        let outcome = try swiftPackage(
            ExamplePaths.example, [Self.allow, "memharness", "run", "--configuration", "debug", "--quick"])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.output.contains("json-cache: keep-forever peaks"), "\(outcome.output)")
        #expect(outcome.stderr.contains("[MemHarnessPlugin] building json-cache-harness (debug)"))
        #expect(outcome.stderr.contains("[MemHarnessPlugin] building memharness-agent (debug)"))
        let rows = CSVTable.parse(try String(contentsOf: report.appendingPathComponent("summary.csv"), encoding: .utf8))
        // A header and one row per strategy (--quick: one repetition); the case of each that captured its heap for its
        // `expect:` is in instrumented.csv, with the heap graph's figures.
        #expect(rows.count == 3, "\(rows)")
        let instrumented = CSVTable.parse(
            try String(contentsOf: report.appendingPathComponent("instrumented.csv"), encoding: .utf8))
        #expect(instrumented.count == 3, "\(instrumented)")
        #expect(instrumented.first.map { $0.contains("leaked_blocks") && $0.contains("instrumentation") } == true)
        #expect(
            FileManager.default.isReadableFile(
                atPath: ExamplePaths.example.appendingPathComponent(".build/debug/libmemharness-agent.so").path))
    }

    @Test func otherSubcommandsArePassedThrough() throws {
        try #require(ExamplePaths.missingHarness == nil, "\(ExamplePaths.missingHarness ?? "")")
        let outcome = try swiftPackage(
            ExamplePaths.example, [Self.allow, "memharness", "list", "--configuration", "debug"])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.stdout.contains("json-cache: Articles from a JSON API"))
    }

    @Test func aFindingThroughThePluginNamesItsStatusAndTheExecutableThatGivesIt() throws {
        try #require(ExamplePaths.missingHarness == nil, "\(ExamplePaths.missingHarness ?? "")")
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        // The shipped demo of a failure (`manual: true`, so a plain run leaves it out), named.
        let outcome = try swiftPackage(
            ExamplePaths.example,
            [
                Self.allow, "memharness", "run", "json-cache-failure-demo", "--configuration", "debug", "--out",
                out.path,
            ])
        #expect(outcome.status == 1, "SwiftPM ends every failed plugin with 1: \(outcome.output)")
        #expect(outcome.stdout.contains("FAIL: keep-forever.peakAllocated"), "\(outcome.output)")
        #expect(outcome.stderr.contains("json-cache-harness exited with status 2;"), "\(outcome.output)")
        #expect(outcome.stderr.contains("/debug/json-cache-harness\n"), "\(outcome.output)")
    }

    @Test func withoutThePermissionSwiftPMRefusesBeforeBuilding() throws {
        let outcome = try swiftPackage(ExamplePaths.example, ["memharness", "list"])
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("wants permission to write to the package directory"), "\(outcome.output)")
        #expect(outcome.stderr.contains("Use `\(Self.allow)` to allow this."))
    }

    @Test(arguments: [
        (["--product", "nope"], "error: no product named 'nope'; expected one of: json-cache-harness"),
        (
            ["--product", "JSONCache"],
            "error: 'JSONCache' is not an executable product; expected one of: json-cache-harness"
        ),
        (["--product"], "error: --product needs a value"),
    ])
    func badPluginArgumentsAreRefusedBeforeBuilding(arguments: [String], message: String) throws {
        try #require(ExamplePaths.missingHarness == nil, "\(ExamplePaths.missingHarness ?? "")")
        let outcome = try swiftPackage(ExamplePaths.example, [Self.allow, "memharness", "run"] + arguments)
        #expect(outcome.status == 1, "SwiftPM exits with 1 whenever a plugin fails: \(outcome.output)")
        #expect(outcome.stderr.contains(message), "\(outcome.output)")
        #expect(!outcome.output.contains("[MemHarnessPlugin] building"), "nothing was built")
    }

    @Test func aPackageWithoutAHarnessExecutableIsToldHowToAddOne() throws {
        let package = ExamplePaths.fixtures.appendingPathComponent("NoHarness")
        // SwiftPM works in a scratch folder of its own, so that the fixture in the source tree stays as it is.
        let scratch = try temporaryFolder()
        defer {
            try? FileManager.default.removeItem(at: scratch)
            removeLockFiles(ofScratchPath: scratch.path)
        }
        let plugin = { (arguments: [String]) in
            try swiftPackage(package, ["--scratch-path", scratch.path, Self.allow, "memharness", "run"] + arguments)
        }
        let outcome = try plugin([])
        #expect(outcome.status == 1)
        #expect(
            outcome.stderr.contains(
                "error: package 'NoHarness' has no executable product that depends on MemHarness "
                    + "(executable products: tool); add one whose main.swift is "
                    + "`MemHarness.main(workloads: [MyWorkload()])`"), "\(outcome.output)")
        #expect(!outcome.output.contains("[MemHarnessPlugin] building"), "nothing was built")

        let named = try plugin(["--product", "tool"])
        #expect(named.status == 1)
        #expect(
            named.stderr.contains(
                "error: the executable 'tool' does not depend on MemHarness; the package has no executable product "
                    + "that depends on MemHarness"), "\(named.output)")
    }

    /// memharness itself has three harness executables (`memharness` and the test programs `leak-fixtures` and
    /// `duplicate-workloads`).
    /// Its own `.build` is busy with this test run, so SwiftPM works in a scratch folder of its own.
    @Test func severalHarnessExecutablesNeedProduct() throws {
        let scratch = try temporaryFolder()
        defer {
            try? FileManager.default.removeItem(at: scratch)
            removeLockFiles(ofScratchPath: scratch.path)
        }
        let outcome = try swiftPackage(
            ExamplePaths.repository, ["--scratch-path", scratch.path, Self.allow, "memharness", "list"])
        #expect(outcome.status == 1)
        #expect(
            outcome.stderr.contains(
                "error: several executable products depend on MemHarness: memharness, leak-fixtures, "
                    + "duplicate-workloads; choose one with --product NAME"), "\(outcome.output)")
        #expect(!outcome.output.contains("[MemHarnessPlugin] building"), "nothing was built")
    }
}
