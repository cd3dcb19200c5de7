import FileIO
import HarnessModel
import Reports
import TestSupport
import Testing

@Suite struct LeaksSectionTests {
    static func result(
        _ strategy: String, repetition: Int, expectation: LeakExpectation?, survivors: Int,
        slopePerIteration: Int, residue: Int, oneOffJumpAt: Int? = nil
    ) -> CaseResult {
        CaseResult.draft(
            scenario: "subscriptions", workload: "subscriptions", strategy: strategy, repetition: repetition,
            expectation: expectation
        ) { result in
            result.residueBytes = residue
            // A thread starting at `oneOffJumpAt` adds its 28 KiB allocator cache once.
            let live = (0..<8).map {
                40_000_000 + $0 * slopePerIteration + ($0 % 2) * 64 + ($0 >= (oneOffJumpAt ?? 8) ? 28_672 : 0)
            }
            result.leaks = LeakMeasurements(
                tracked: [TypeCount(typeName: "ProfileScreen", count: 8)],
                survivors: survivors > 0 ? [TypeCount(typeName: "ProfileScreen", count: survivors)] : [],
                growth: [GrowthSeries(phase: "screens", warmupIterations: 2, liveBytesAfterIteration: live)],
                threadCacheBytesAtBaseline: 2048 * repetition, threadCacheBytesAtEnd: 1024)
        }
    }

    static let run = ScenarioRun(
        name: "subscriptions", file: "Scenarios/subscriptions.yaml", workload: "subscriptions", summary: "",
        parameters: [], strategies: ["strong-self-capture", "weak-self", "cancel-on-teardown", "finite-publisher"],
        steps: ["screens"], repetitions: 2,
        cases: [1, 2].flatMap { repetition in
            [
                result(
                    "strong-self-capture", repetition: repetition, expectation: .leaks, survivors: 8,
                    slopePerIteration: 82_488, residue: 660_000),
                result(
                    "weak-self", repetition: repetition, expectation: .leakFree, survivors: 0,
                    slopePerIteration: 0, residue: -4_176, oneOffJumpAt: repetition == 2 ? 5 : nil),
                // Leaks in the second repetition only: still a finding.
                result(
                    "cancel-on-teardown", repetition: repetition, expectation: .leakFree,
                    survivors: repetition == 2 ? 1 : 0,
                    slopePerIteration: 0, residue: 80_000 * (repetition - 1)),
                result(
                    "finite-publisher", repetition: repetition, expectation: .leaks, survivors: 0,
                    slopePerIteration: 0, residue: 0),
            ]
        }
    )

    @Test func rendersTheGoldenSection() throws {
        let markdown = try #require(LeaksSection.markdown(for: Self.run))
        try ReportWriterTests().checkGolden(markdown, "leaks-section.md")
    }

    @Test func aScenarioWithoutLeakEvidenceOrExpectationsHasNoSection() {
        var run = Self.run
        run.cases = run.cases.map { $0.changingMeasurements { $0.leaks = LeakMeasurements() } }
        // An expectation nothing could assess is said, not left out: the section stays, saying why.
        let lines = LeaksSection.lines(for: run)
        #expect(
            lines.contains(
                "**`weak-self` could not be assessed**: nothing tracked, no repeat step, and no heap graph "
                    + "was captured."), "\(lines)")
        run.cases = run.cases.map { result in
            var result = result
            result.expectation = nil
            return result
        }
        #expect(LeaksSection.lines(for: run).isEmpty)
        #expect(LeaksSection.markdown(for: run) == nil)
    }

    @Test func theHeadingLevelIsTheCallersChoice() {
        #expect(LeaksSection.lines(for: Self.run, headingLevel: 2).first == "## Leaks")
    }
}
