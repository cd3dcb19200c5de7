import WorkloadKit
import XCTest

extension XCTestCase {
    /// Runs `body` and fails this test (`XCTFail` at `file`:`line`) when its memory breaks the limits.
    ///
    /// The XCTest front door of the Swift Testing `expectMemory`: the same figures, the same replica (this
    /// test binary run again with the filter `Module.Class/testMethod`), the same messages; see there for
    /// what is measured, how, and what is not.
    ///
    /// ```swift
    /// func testFeedStaysSmall() throws {
    ///     try expectMemory(peakBelow: .mebibytes(64), leaks: .none) { context in
    ///         context.track(Feed(posts: 1_000))
    ///     }
    /// }
    /// ```
    @_disfavoredOverload @discardableResult
    public func expectMemory(
        peakBelow peakLimit: MemorySize? = nil, residueBelow residueLimit: MemorySize? = nil,
        leaks: LeakTolerance = .none, iterations: Int = 1, measuring: MemoryMeasuring = .replica,
        file: StaticString = #filePath, line: UInt = #line, _ body: (MemoryContext) throws -> Void
    ) throws -> MemoryFigures {
        try xcTestCore(
            MemoryExpectation(peakBelow: peakLimit, residueBelow: residueLimit, leaks: leaks),
            iterations: iterations, measuring: measuring, file: file, line: line
        ).run(body)
    }

    /// Runs `body` and fails this test when its memory breaks the limits; `body` takes no context.
    @_disfavoredOverload @discardableResult
    public func expectMemory(
        peakBelow peakLimit: MemorySize? = nil, residueBelow residueLimit: MemorySize? = nil,
        leaks: LeakTolerance = .none, iterations: Int = 1, measuring: MemoryMeasuring = .replica,
        file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void
    ) throws -> MemoryFigures {
        try xcTestCore(
            MemoryExpectation(peakBelow: peakLimit, residueBelow: residueLimit, leaks: leaks),
            iterations: iterations, measuring: measuring, file: file, line: line
        ).run { _ in try body() }
    }

    /// Awaits `body` and fails this test when its memory breaks the limits; in async code this is the form
    /// chosen (write `try await expectMemory { ... }`), and it waits for the replica without holding a thread.
    @discardableResult
    public nonisolated(nonsending) func expectMemory(
        peakBelow peakLimit: MemorySize? = nil, residueBelow residueLimit: MemorySize? = nil,
        leaks: LeakTolerance = .none, iterations: Int = 1, measuring: MemoryMeasuring = .replica,
        file: StaticString = #filePath, line: UInt = #line,
        _ body: (MemoryContext) async throws -> Void
    ) async throws -> MemoryFigures {
        try await xcTestCore(
            MemoryExpectation(peakBelow: peakLimit, residueBelow: residueLimit, leaks: leaks),
            iterations: iterations, measuring: measuring, file: file, line: line
        ).runAsync(body)
    }

    /// Awaits `body` and fails this test when its memory breaks the limits; `body` takes no context.
    @discardableResult
    public nonisolated(nonsending) func expectMemory(
        peakBelow peakLimit: MemorySize? = nil, residueBelow residueLimit: MemorySize? = nil,
        leaks: LeakTolerance = .none, iterations: Int = 1, measuring: MemoryMeasuring = .replica,
        file: StaticString = #filePath, line: UInt = #line,
        _ body: () async throws -> Void
    ) async throws -> MemoryFigures {
        try await xcTestCore(
            MemoryExpectation(peakBelow: peakLimit, residueBelow: residueLimit, leaks: leaks),
            iterations: iterations, measuring: measuring, file: file, line: line
        ).runAsync { _ in try await body() }
    }

    /// Runs one strategy of `workload` as a harness case would and fails this test (`XCTFail` at `file`:`line`)
    /// when its memory breaks the limits.
    ///
    /// The XCTest front door of the Swift Testing `expectMemory(of:strategy:parameters:steps:scenario:...)`: the
    /// same resolution of the run (defaults, a scenario file, `--set`-style overrides, steps), the same figures and
    /// messages; see there.
    @discardableResult
    public func expectMemory(
        of workload: some Workload, strategy: String, parameters: KeyValuePairs<String, String> = [:],
        steps: [String]? = nil, scenario: String? = nil, peakBelow peakLimit: MemorySize? = nil,
        residueBelow residueLimit: MemorySize? = nil, leaks: LeakTolerance = .none, iterations: Int = 1,
        measuring: MemoryMeasuring = .replica, file: StaticString = #filePath, line: UInt = #line
    ) throws -> MemoryFigures {
        try xcTestCore(
            MemoryExpectation(peakBelow: peakLimit, residueBelow: residueLimit, leaks: leaks),
            iterations: iterations, measuring: measuring, file: file, line: line
        ).run(WorkloadRun(workload, strategy: strategy, parameters: parameters, steps: steps, scenario: scenario))
    }

    /// The core for this test method: its filter name, this instance as the owner, failures at `file`:`line`.
    private func xcTestCore(
        _ expectation: MemoryExpectation, iterations: Int, measuring: MemoryMeasuring, file: StaticString,
        line: UInt
    ) -> ExpectationCore {
        ExpectationCore(
            expectation: expectation, iterations: iterations, measuring: measuring,
            test: TestIdentity.xcTest(type: String(reflecting: type(of: self)), name: name),
            owner: ObjectIdentifier(self).hashValue, site: "\(file):\(line)", function: "XCTestCase.expectMemory",
            record: { XCTFail($0, file: file, line: line) })
    }
}
