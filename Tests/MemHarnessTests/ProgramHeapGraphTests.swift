import FileIO
import Foundation
import HarnessModel
import Reports
import Testing

/// The heap graph of external programs, end to end on the built binaries: `profile --heap-graph` and command
/// scenarios whose strategies state `expect:`. The agent in the program captures its heap at exit; what no root
/// reaches there is leaked, with no object tracked and nothing registered.
///
/// Known answers by construction: `agent-probe leaks at-exit` loses a 1,000 B block and a cycle of two 2,000 B
/// structs (3 blocks, 5 KiB in jemalloc's size classes, 1 cycle) and keeps 3,000 + 4,000 B through a global (one
/// pointer tagged) and 5,000 + 6,000 B on the stack and in a register of a thread blocked in read(2).
/// `heap-fixtures cycle-of-three` leaks three Swift objects in a cycle; `empty` leaks nothing.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct ProgramHeapGraphTests {
    @Test func profileFindsAProgramsLeaksAtItsExitExactly() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.profile(["--heap-graph"], [ProgramTrial.agentProbe, "leaks", "at-exit"])
        // A leak nobody declared is a finding.
        #expect(outcome.status == 2, "\(outcome.stdout)\(outcome.stderr)")
        // The measured case in summary.csv, its repetition numbered; the heap case apart, named, never numbered.
        let rows = try trial.rows()
        let measured = try #require(rows.first, "\(rows)")
        #expect(rows.count == 1 && measured["repetition"] == "1" && measured["instrumentation"] == nil)
        let instrumented = try trial.rows("instrumented.csv")
        let heap = try #require(instrumented.first, "\(instrumented)")
        #expect(instrumented.count == 1 && heap["instrumentation"] == "heap" && heap["repetition"] == nil)
        #expect(measured["leaked_blocks"] == nil)  // summary.csv has no heap-graph columns: no measured case captures
        // The probe sees the live heap at exit (the kept blocks, the C library's) ...
        let record = try ReportFolder.read(trial.out)
        let capture = try #require(
            record.report.scenarios.first?.instrumentedCases.first?.measurements?.heapGraph?.last)
        #expect(capture.label == "at exit")
        #expect(capture.liveBlocks >= 7 && capture.reachableBlocks >= 4, "\(capture.liveBlocks) live blocks")
        // ... and finds exactly the lost ones.
        #expect(heap["leaked_blocks"] == "3" && heap["leaked_bytes"] == "5120" && heap["leaked_cycles"] == "1")
        #expect(heap["leak_verdict"] == "leaks")
        #expect(capture.groups.map(\.kind).sorted { $0.rawValue < $1.rawValue } == [.rootCycle, .rootLeak])
        let report = try String(contentsOfFile: "\(trial.out)/report.md", encoding: .utf8)
        #expect(
            report.contains(
                "| 3 blocks (5.00 KiB) no root reaches, in 1 cycle | **unexpected leak** (by the heap graph) |"))
        #expect(report.contains("at exit, 3 blocks (5.00 KiB) no root reaches, in 1 cycle"))
        // A report folder with its heap/ captures is the harness's own: a second run replaces it.
        #expect(FileManager.default.fileExists(atPath: "\(trial.out)/heap"))
        let again = try trial.profile(["--heap-graph"], [ProgramTrial.agentProbe, "leaks", "at-exit"])
        #expect(again.status == 2, "\(again.stderr)")
    }

    @Test func aSwiftProgramsLeakedObjectsAreNamedFromItsSymbols() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let fixtures = CommandLineTests.binary(named: "heap-fixtures")
        try #require(FileManager.default.isExecutableFile(atPath: fixtures), "`make test` builds heap-fixtures")
        // The fixture program captures its own heap too: the agent must track blocks in every case it runs in.
        let environment = ["MEMHARNESS_AGENT_HEAP": "1"]
        let leaking = try trial.memharness(
            ["profile", "--heap-graph", "--out", trial.out, "--", fixtures, "cycle-of-three"], environment: environment)
        #expect(leaking.status == 2, "\(leaking.stdout)\(leaking.stderr)")
        let record = try ReportFolder.read(trial.out)
        let capture = try #require(
            record.report.scenarios.first?.instrumentedCases.first?.measurements?.heapGraph?.last)
        #expect(capture.leakedBlocks == 3 && capture.cycleCount == 1, "\(capture.groups)")
        let names = Set(capture.groups.flatMap(\.types).map(\.type.name))
        #expect(names == ["heap_fixtures.Ring1", "heap_fixtures.Ring2", "heap_fixtures.Ring3"], "\(names)")

        let emptyOut = "\(trial.folder)/empty"
        let empty = try trial.memharness(
            ["profile", "--heap-graph", "--out", emptyOut, "--", fixtures, "empty"], environment: environment)
        #expect(empty.status == 0, "\(empty.stdout)\(empty.stderr)")
        let emptyCapture = try #require(
            try ReportFolder.read(emptyOut).report.scenarios.first?.instrumentedCases.first?.measurements?.heapGraph?
                .last
        )
        // The probe sees the program's live heap at exit (the runtime's and the C library's blocks; not the ones the
        // fixture's own in-process capture made naming its heap: the harness's blocks are in no capture).
        #expect(
            emptyCapture.liveBlocks > 20 && emptyCapture.leakedBlocks == 0,
            "\(emptyCapture.liveBlocks) live: \(emptyCapture.groups)")
    }

    /// A Swift program's own heap objects, named from outside: the program is held at its exit while its memory is read
    /// (generic instances, closures, boxes, tasks and their frames have no symbol; their metadata is in its memory).
    @Test func aSwiftProgramsObjectsAreNamedFromItsMemoryAtExit() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let fixtures = CommandLineTests.binary(named: "heap-fixtures")
        try #require(FileManager.default.isExecutableFile(atPath: fixtures), "`make test` builds heap-fixtures")
        let outcome = try trial.memharness(
            ["profile", "--heap-graph", "--out", trial.out, "--", fixtures, "swift-kinds"],
            environment: ["MEMHARNESS_AGENT_HEAP": "1"])
        #expect(outcome.status == 2, "\(outcome.stdout)\(outcome.stderr)")
        let record = try ReportFolder.read(trial.out)
        let capture = try #require(
            record.report.scenarios.first?.instrumentedCases.first?.measurements?.heapGraph?.last)
        let naming = try #require(capture.naming)
        #expect(naming.source == .heldProcess)
        // The probe sees the program's Swift objects (the fixtures' 18 in their cycles, the runtime's; not the ones the
        // fixture's own in-process capture made naming its heap first: the harness's blocks are in no capture) ...
        #expect(naming.swiftObjectBlocks > 20, "\(naming)")
        // ... names at least 90% of them by their Swift type, and each kind of the fixtures as Swift names it.
        #expect(Double(naming.swiftObjectsNamedByType) >= 0.9 * Double(naming.swiftObjectBlocks), "\(naming)")
        let names = Set(capture.groups.flatMap(\.types).map(\.type.name))
        let expected: Set<String> = [
            "[heap_fixtures.Document]", "[String : heap_fixtures.Image]",
            "closure #1 in bindController(_:log:threshold:)",
            "box of heap_fixtures.Counter?", "box of Int", "AsyncStream<Int>._Storage",
            "Task running closure #1 in Worker.start(on:)", "CheckedContinuationCanary",
        ]
        #expect(names.isSuperset(of: expected), "missing: \(expected.subtracting(names))")
        #expect(capture.cycleCount >= 6)
    }

    @Test func anExpectationOnACommandIsAssessedByItsHeapGraph() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let scenario = try trial.script(
            "expectations.yaml",
            """
            scenario: expectations
            workload: command
            strategies:
              - name: declared-leaking
                command: agent-probe leaks at-exit
                expect: leaks
              - name: said-leak-free
                command: agent-probe leaks at-exit
                expect: leak-free
              - name: undeclared
                command: agent-probe hold 1MiB 10
            repetitions: 1
            thresholds:
              declared-leaking:
                leakedBytes: <= 4KiB

            """, mode: 0o644)
        let outcome = try trial.memharness(["run", scenario, "--out", trial.out])
        #expect(outcome.status == 2, "\(outcome.stdout)\(outcome.stderr)")
        // Only the strategies that expect something get the extra case that captures the heap.
        let heapRows = try trial.rows("instrumented.csv").filter { $0["instrumentation"] == "heap" }
        #expect(Set(heapRows.compactMap { $0["strategy"] }) == ["declared-leaking", "said-leak-free"])
        let record = try ReportFolder.read(trial.out)
        let checks = record.checks
        let leakFree = try #require(checks.first { $0.strategy == "said-leak-free" && $0.kind == .leak })
        #expect(!leakFree.passed && leakFree.message.contains("3 blocks (5.00 KiB) no root reaches"), "\(leakFree)")
        let declared = try #require(checks.first { $0.strategy == "declared-leaking" && $0.kind == .leak })
        #expect(declared.passed, "\(declared)")
        // A threshold on a heap-graph figure reads the instrumented case: 5 KiB leaked breaks 4 KiB.
        let threshold = try #require(checks.first { $0.kind == .threshold })
        #expect(!threshold.passed && threshold.actual == "5.00 KiB", "\(threshold)")
    }
}
