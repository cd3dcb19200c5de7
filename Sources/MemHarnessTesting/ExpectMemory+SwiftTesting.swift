import Testing
import WorkloadKit

/// Runs `body` and fails the current test when its memory breaks the limits: the peak allocated above the
/// start, the residue left after it, or tracked objects that survive it.
///
/// ```swift
/// @Test func feedStaysSmall() throws {
///     try expectMemory(peakBelow: .mebibytes(64), residueBelow: .kibibytes(256), leaks: .none) { context in
///         let feed = Feed(posts: 1_000)
///         context.track(feed)
///         feed.render()
///     }
/// }
/// ```
///
/// **What is measured.** jemalloc's `stats.allocated` (size-class bytes, every thread of the process): the
/// start is read after a settle (`measuring.settle`, default 50 ms: this thread's cache flushed, arenas
/// purged, a pause for frees on other threads, again); the **peak** is the highest sample above the start
/// (sampled every `measuring.samplingInterval`, default 1 ms) or, when the closure ends on the thread it
/// started on (a synchronous one always does), that thread's exact high-water mark (jemalloc's
/// `thread.peak`, within 64 KiB) when that is higher (unless other threads freed that thread's blocks, which
/// makes its count meaningless); the **residue** is
/// `stats.allocated` after the last run and another settle, minus the start; **survivors** are objects
/// passed to `context.track` that are still alive then, per type name. With `iterations` of 4 or more the
/// closure runs that many times, the live heap is read after each run, and `leaks: .none` also fails on
/// growth per run (the first run is a warm-up; the harness's criteria). Work the closure starts on other
/// threads, queues or tasks counts, as long as it happens before the residue is read.
///
/// **What is not.** Spikes on other threads shorter than the sampling interval; memory not from malloc
/// (mmap by hand, file pages, thread stacks); bytes asked for (the figures are size classes, up to 25%
/// more). Freed blocks sitting in other threads' caches count as allocated (`leaks.residueUncertaintyBytes`).
/// jemalloc must serve the test executable's allocations (a test target depending on MemHarnessTesting
/// links it); otherwise the expectation throws.
///
/// **Honest figures while tests run in parallel.** jemalloc's figures are process-wide, and Swift Testing
/// runs tests in parallel, so by default (`measuring: .replica`) the closure is not measured in this
/// process. The expectation runs this test binary again in a child process, filtered to the current test
/// alone (Swift Testing: `--filter` on the test's whole ID, serial; XCTest: `Module.Class/testMethod`),
/// where no other test exists. There the test runs as usual up to this expectation (earlier expectations
/// run their closures and return the figures this process got for them, so the test takes the same path),
/// the closure is measured, the figures come back through a file, and the child ends at once. Then the
/// closure runs here, unmeasured, with its side effects, and the figures are judged. Each expectation costs
/// one start of the test binary (0.15-0.2 s for a 45 MB debug binary with Swift Testing's discovery, about
/// 0.05 s with XCTest), the test up to the expectation, and the two settles: 0.2-0.5 s in all on 2 busy
/// cores, against 0.13 s measured in this process. The child is killed with everything it started past
/// `measuring.timeLimit`, dies with this process, and leaves no files. The test must therefore reach this
/// expectation the same way in a fresh process: self-contained, no state left by other tests, no resource a
/// second process cannot hold at the same time (a fixed port, an exclusively locked file); the closure runs
/// once there and once here. Expectations of one test are told apart by call site and by how many times
/// that line ran before in the test, so they must run one after another (two at once, in a task group,
/// would run at once in the replica too and measure each other). `MemoryIsolation.isReplicaProcess` tells
/// the test it is the child.
/// `measuring: .thisProcess` measures here instead, one expectation at a time: faster, honest only when no
/// other test runs meanwhile (`swift test --no-parallel`).
///
/// This synchronous form blocks the calling thread while the replica runs; in async code the async form is
/// chosen instead (`try await expectMemory { ... }`), whether or not the closure awaits.
///
/// **Failures.** Each broken limit is an issue recorded at the call site through `Issue.record`, saying the
/// figure, the limit, by how much and what to try (`peak 71.30 MiB above the start, over the 64 MiB limit
/// by 7.30 MiB (11%). The peak is ...`); the test goes on. A closure's error is rethrown. When the figures
/// cannot be taken (jemalloc is not the process allocator, the replica did not reach this expectation,
/// timed out or crashed) a `MemoryTestingError` saying how to fix it is thrown.
///
/// - Parameters:
///   - peakLimit: the peak above the start must stay below this; nil: no limit.
///   - residueLimit: the residue must stay below this; nil: no limit.
///   - leaks: `.none` fails on survivors and growth per run; `.allowed` only reports them in the figures.
///   - iterations: how many times the closure runs (here and where it is measured); at least 1.
///   - measuring: where and how to measure (default `.replica`).
///   - sourceLocation: where failures are reported.
///   - body: the code to measure; `context.track(object)` names an object that must die by its end.
/// - Returns: the figures, for further assertions (all zero in a replica for expectations other than the
///   one it measures).
@_disfavoredOverload @discardableResult
public func expectMemory(
    peakBelow peakLimit: MemorySize? = nil, residueBelow residueLimit: MemorySize? = nil,
    leaks: LeakTolerance = .none, iterations: Int = 1, measuring: MemoryMeasuring = .replica,
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (MemoryContext) throws -> Void
) throws -> MemoryFigures {
    try swiftTestingCore(
        MemoryExpectation(peakBelow: peakLimit, residueBelow: residueLimit, leaks: leaks), iterations: iterations,
        measuring: measuring, sourceLocation: sourceLocation
    ).run(body)
}

/// Runs `body` and fails the current test when its memory breaks the limits; `body` takes no context.
///
/// The same as `expectMemory(peakBelow:residueBelow:leaks:iterations:measuring:sourceLocation:_:)` with a
/// closure that tracks nothing: see there for what is measured, how, and what is not.
@_disfavoredOverload @discardableResult
public func expectMemory(
    peakBelow peakLimit: MemorySize? = nil, residueBelow residueLimit: MemorySize? = nil,
    leaks: LeakTolerance = .none, iterations: Int = 1, measuring: MemoryMeasuring = .replica,
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) throws -> MemoryFigures {
    try swiftTestingCore(
        MemoryExpectation(peakBelow: peakLimit, residueBelow: residueLimit, leaks: leaks), iterations: iterations,
        measuring: measuring, sourceLocation: sourceLocation
    ).run { _ in try body() }
}

/// Awaits `body` and fails the current test when its memory breaks the limits.
///
/// The async form of `expectMemory(peakBelow:residueBelow:leaks:iterations:measuring:sourceLocation:_:)`,
/// with the same figures; in async code it is the one chosen (write `try await expectMemory { ... }`), and
/// it waits for the replica without holding a thread. `body` runs on the caller's executor
/// (`nonisolated(nonsending)`).
@discardableResult
public nonisolated(nonsending) func expectMemory(
    peakBelow peakLimit: MemorySize? = nil, residueBelow residueLimit: MemorySize? = nil,
    leaks: LeakTolerance = .none, iterations: Int = 1, measuring: MemoryMeasuring = .replica,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (MemoryContext) async throws -> Void
) async throws -> MemoryFigures {
    try await swiftTestingCore(
        MemoryExpectation(peakBelow: peakLimit, residueBelow: residueLimit, leaks: leaks), iterations: iterations,
        measuring: measuring, sourceLocation: sourceLocation
    ).runAsync(body)
}

/// Awaits `body` and fails the current test when its memory breaks the limits; `body` takes no context.
///
/// See the async `expectMemory` with a `MemoryContext` for what is measured.
@discardableResult
public nonisolated(nonsending) func expectMemory(
    peakBelow peakLimit: MemorySize? = nil, residueBelow residueLimit: MemorySize? = nil,
    leaks: LeakTolerance = .none, iterations: Int = 1, measuring: MemoryMeasuring = .replica,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async throws -> MemoryFigures {
    try await swiftTestingCore(
        MemoryExpectation(peakBelow: peakLimit, residueBelow: residueLimit, leaks: leaks), iterations: iterations,
        measuring: measuring, sourceLocation: sourceLocation
    ).runAsync { _ in try await body() }
}

/// The core for a Swift Testing caller: the current test and case, the current task, issues at `sourceLocation`.
private func swiftTestingCore(
    _ expectation: MemoryExpectation, iterations: Int, measuring: MemoryMeasuring, sourceLocation: SourceLocation
) -> ExpectationCore {
    let test = Test.current.map { test in
        TestIdentity.swiftTesting(
            id: test.id.description,
            caseDescription: Test.Case.current.flatMap { $0.isParameterized ? String(describing: $0) : nil })
    }
    return ExpectationCore(
        expectation: expectation, iterations: iterations, measuring: measuring, test: test,
        owner: withUnsafeCurrentTask { $0?.hashValue },
        site: "\(sourceLocation.fileID):\(sourceLocation.line):\(sourceLocation.column)", function: "expectMemory",
        record: { Issue.record(Comment(rawValue: $0), sourceLocation: sourceLocation) })
}

/// Runs one strategy of `workload` as a harness case would (make the case, set up, every step, tear down) and fails
/// the current test when its memory breaks the limits.
///
/// ```swift
/// @Test func anLRUBudgetStaysNearItsBudget() throws {
///     try expectMemory(
///         of: JSONCacheWorkload(), strategy: "lru-budget", parameters: ["cacheBudget": "1MiB", "browse.count": "400"],
///         peakBelow: .mebibytes(2), residueBelow: .kibibytes(256), leaks: .none)
/// }
/// ```
///
/// The run is resolved before anything is measured, with the checks and messages of a scenario file: the
/// descriptor's defaults, or with `scenario:` a scenario file's parameters (the strategy's own included) and
/// steps; then `parameters`, each as `--set` takes it (`NAME: VALUE`, or a step's argument `STEP.ARGUMENT: VALUE`);
/// then `steps`, when given, replace the script, each written as an item of a file's `steps:` list (`"browse: 200"`,
/// `"idle: 50ms"`, `"{repeat: {times: 10, steps: [browse]}}"`). An unknown strategy, parameter or step, or a bad
/// value, throws `MemoryTestingError.workloadRun` saying where and what is valid.
///
/// Measured as the closure form measures (see `expectMemory(peakBelow:residueBelow:leaks:iterations:measuring:
/// sourceLocation:_:)`): the whole case, from `makeCase` to `tearDown`, is the closure; each of `iterations` runs
/// makes a fresh case. Objects the workload tracks with `context.track` are the survivors `leaks:` judges, and each
/// `repeat` step's live heap after every iteration is a growth series `leaks: .none` fails on (the step's `warmup`
/// iterations left out), as in a run's leak check. Built-in `idle` sleeps and `settle` settles. Not done here:
/// gauges are not sampled, metrics are not read, memory warnings are never posted, thresholds of the file are not
/// checked (the limits are the arguments).
///
/// - Parameters:
///   - workload: the workload, as the harness executable registers it.
///   - strategy: one of its strategies.
///   - parameters: overrides, `NAME: VALUE` as `--set NAME=VALUE` takes them; applied last.
///   - steps: the script, replacing the file's or the descriptor's default steps; nil keeps them.
///   - scenario: a scenario file (a path) whose parameters and steps to start from; nil: the descriptor's.
///   - peakLimit: the peak above the start must stay below this; nil: no limit.
///   - residueLimit: the residue must stay below this; nil: no limit.
///   - leaks: `.none` fails on tracked survivors and on growth (per run, or per iteration of a `repeat` step).
///   - iterations: how many times the case runs, each with a fresh case; at least 1.
///   - measuring: where and how to measure (default `.replica`).
///   - sourceLocation: where failures are reported.
/// - Returns: the figures, for further assertions.
@discardableResult
public func expectMemory(
    of workload: some Workload, strategy: String, parameters: KeyValuePairs<String, String> = [:],
    steps: [String]? = nil, scenario: String? = nil, peakBelow peakLimit: MemorySize? = nil,
    residueBelow residueLimit: MemorySize? = nil, leaks: LeakTolerance = .none, iterations: Int = 1,
    measuring: MemoryMeasuring = .replica, sourceLocation: SourceLocation = #_sourceLocation
) throws -> MemoryFigures {
    try swiftTestingCore(
        MemoryExpectation(peakBelow: peakLimit, residueBelow: residueLimit, leaks: leaks), iterations: iterations,
        measuring: measuring, sourceLocation: sourceLocation
    ).run(WorkloadRun(workload, strategy: strategy, parameters: parameters, steps: steps, scenario: scenario))
}
