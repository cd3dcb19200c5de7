import Dispatch
import HarnessModel
import Measurement
import Synchronization
import WorkloadKit

/// A case starting or finishing, for progress display.
public enum RunEvent: Sendable {
    case started(index: Int, total: Int, spec: CaseSpec)
    case finished(index: Int, total: Int, result: CaseResult, elapsedNanoseconds: Int64)
    /// A case an interrupted run had finished, taken from its journal (`--resume`).
    case resumed(index: Int, total: Int, result: CaseResult)
}

/// Runs a plan's cases, each to its outcome, and the further repetitions `repetitions: auto` scenarios
/// ask for (`RepetitionSchedule`) as their rounds end. Cases run one at a time, or up to `jobs` at once
/// for the scenarios that allow it (`parallel: true`: their figures are their own process's and not
/// timing-sensitive). Results come back in run order (the plan's, with further repetitions after the
/// round that asked for them) whatever order the cases ended in.
public enum RunExecution {
    /// Runs `plan` with `launcher`. A case `journal` already holds (an interrupted run's, with `--resume`)
    /// is taken from it instead; every result is kept in the journal as it ends. `events` hears of each
    /// start and end, from one thread at a time. A signal stops the run between cases: the results are
    /// then those that finished.
    ///
    /// - Parameters:
    ///   - stopRequested: True once the run must stop (default: a signal came, `Interruption`); asked before
    ///     each case starts and as each ends: a case that ends after it turned true is not a result (its
    ///     process was killed). Tests and benchmarks stop a run at a case of their choosing with it.
    ///   - clock: The monotonic time in nanoseconds each case's wall time is read from; tests and
    ///     benchmarks inject a fixed one so that two runs' records compare byte for byte.
    public static func execute(
        _ plan: RunPlan, launcher: some CaseLaunching, journal: RunJournal? = nil,
        stopRequested: @escaping @Sendable () -> Bool = { Interruption.signal != nil },
        clock: @escaping @Sendable () -> Int64 = { MonotonicClock.nanoseconds() },
        events: (RunEvent) -> Void = { _ in }
    ) -> [CaseResult] {
        var queue = CaseQueue(cases: plan.cases, schedule: RepetitionSchedule(plan))
        let jobs = launcher.runsCasesInTheirOwnProcess ? max(plan.options.jobs, 1) : 1
        let running = Running(stopRequested: stopRequested, clock: clock)
        while let batch = queue.nextBatch(concurrent: jobs > 1 ? plan.mayRunConcurrently : { _ in false }) {
            var finished: [Int: CaseResult] = [:]
            var toRun: [Int] = []
            for position in batch {
                if let result = journal?.result(for: queue.cases[position]) {
                    finished[position] = result
                    events(.resumed(index: position + 1, total: queue.cases.count, result: result))
                } else {
                    toRun.append(position)
                }
            }
            let ran = run(
                toRun, of: queue.cases, jobs: jobs, launcher: launcher, journal: journal, running: running,
                events: events)
            finished.merge(ran) { first, _ in first }
            queue.finish(batch, results: finished)
            guard !stopRequested() else { break }
        }
        return queue.results
    }

    /// When to stop and how to time a case, as `execute` was given them.
    private struct Running: Sendable {
        var stopRequested: @Sendable () -> Bool
        var clock: @Sendable () -> Int64
    }

    /// Runs the cases at `positions` of `cases` on up to `jobs` threads; each takes the next not yet started.
    private static func run(
        _ positions: [Int], of cases: [CaseSpec], jobs: Int, launcher: some CaseLaunching, journal: RunJournal?,
        running: Running, events: (RunEvent) -> Void
    ) -> [Int: CaseResult] {
        guard !positions.isEmpty else { return [:] }
        let next = Atomic<Int>(0)
        let finished = Mutex<[Int: CaseResult]>([:])
        let announce = Mutex<Void>(())
        withoutActuallyEscaping(events) { events in
            // Called under `announce` only, so from one thread at a time: the caller's closure need not be Sendable.
            nonisolated(unsafe) let events = events
            let report: @Sendable (RunEvent) -> Void = { event in announce.withLock { _ in events(event) } }
            DispatchQueue.concurrentPerform(iterations: min(jobs, positions.count)) { _ in
                while !running.stopRequested() {
                    let slot = next.add(1, ordering: .relaxed).oldValue
                    guard slot < positions.count else { return }
                    let position = positions[slot]
                    let result = execute(
                        cases[position], index: position, total: cases.count, launcher: launcher,
                        clock: running.clock, events: report)
                    // The case the signal cut short (its process killed) is not a result.
                    guard !running.stopRequested() else { return }
                    journal?.record(result, of: cases[position])
                    finished.withLock { $0[position] = result }
                }
            }
        }
        return finished.withLock { $0 }
    }

    /// Runs one case (the `index`-th of `total`, from 0) and names its outcome; its wall time is read from `clock`.
    static func execute(
        _ spec: CaseSpec, index: Int, total: Int, launcher: some CaseLaunching,
        clock: () -> Int64 = { MonotonicClock.nanoseconds() }, events: (RunEvent) -> Void
    ) -> CaseResult {
        events(.started(index: index + 1, total: total, spec: spec))
        let start = clock()
        // An instrumented case is no repetition: its result is named by what it recorded.
        var result = CaseResult(
            scenario: spec.scenario, workload: spec.workload, strategy: spec.strategy,
            repetition: spec.isInstrumented ? 0 : spec.repetition, expectation: spec.expectation,
            outcome: launcher.launch(spec))
        result.instrumentation = spec.instrumentation
        result.suppressions = spec.suppressions
        let elapsed = clock() - start
        result.wallNanoseconds = elapsed
        events(.finished(index: index + 1, total: total, result: result, elapsedNanoseconds: elapsed))
        return result
    }
}

/// The cases of a run in run order, growing as `repetitions: auto` asks for more, handed out in batches:
/// a batch is one case, or every case in a row that may run beside the others.
struct CaseQueue {
    private(set) var cases: [CaseSpec]
    private var outcomes: [CaseResult?]
    private var schedule: RepetitionSchedule
    private var next = 0

    init(cases: [CaseSpec], schedule: RepetitionSchedule) {
        self.cases = cases
        outcomes = cases.map { _ in nil }
        self.schedule = schedule
    }

    /// The positions of the next cases to run; nil when every case has run.
    mutating func nextBatch(concurrent: (CaseSpec) -> Bool) -> [Int]? {
        guard next < cases.count else { return nil }
        var end = next + 1
        if concurrent(cases[next]) {
            while end < cases.count && concurrent(cases[end]) { end += 1 }
        }
        defer { next = end }
        return Array(next..<end)
    }

    /// Takes the results of `batch` (in its order, so the rounds of `repetitions: auto` are judged the
    /// same way however the cases interleaved) and puts the repetitions they ask for right after it.
    mutating func finish(_ batch: [Int], results: [Int: CaseResult]) {
        var further: [CaseSpec] = []
        for position in batch {
            guard let result = results[position] else { continue }
            outcomes[position] = result
            further += schedule.casesAfter(result)
        }
        let end = (batch.last ?? next - 1) + 1
        cases.insert(contentsOf: further, at: end)
        outcomes.insert(contentsOf: further.map { _ in nil }, at: end)
    }

    /// The results so far, in run order.
    var results: [CaseResult] { outcomes.compactMap { $0 } }
}
