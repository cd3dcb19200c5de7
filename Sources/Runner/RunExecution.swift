import Dispatch
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

/// Runs a plan's cases, each to its outcome: one at a time, or up to `jobs` at once for the scenarios
/// that allow it (`parallel: true`: their figures are their own process's and not timing-sensitive).
/// Results come back in plan order whatever order the cases ended in.
public enum RunExecution {
    /// Runs every case of `plan` with `launcher`, except those `journal` already holds (an interrupted
    /// run's, with `--resume`); each result is kept in the journal as it ends. `events` hears of each
    /// start and end (from one thread at a time). A signal stops the run between cases: the results
    /// are then those that finished.
    static func execute(
        _ plan: RunPlan, launcher: some CaseLaunching, journal: RunJournal?,
        events: (RunEvent) -> Void = { _ in }
    ) -> [CaseResult] {
        let total = plan.cases.count
        var results = [CaseResult?](repeating: nil, count: total)
        for (index, result) in journal?.finished ?? [:] where index < total {
            results[index] = result
            events(.resumed(index: index + 1, total: total, result: result))
        }
        let jobs = launcher.runsCasesInTheirOwnProcess ? max(plan.options.jobs, 1) : 1
        var index = 0
        while index < total {
            // A run of cases that may share the machine goes to the workers; any other case runs alone.
            var end = index + 1
            if jobs > 1 && plan.mayRunConcurrently(index) {
                while end < total && plan.mayRunConcurrently(end) { end += 1 }
            }
            let pending = (index..<end).filter { results[$0] == nil }
            let finished = run(pending, of: plan, jobs: jobs, launcher: launcher, journal: journal, events: events)
            for (position, result) in finished { results[position] = result }
            guard Interruption.signal == nil else { break }
            index = end
        }
        return results.compactMap { $0 }
    }

    /// Runs the cases at `positions` on up to `jobs` threads; each takes the next case not yet started.
    private static func run(
        _ positions: [Int], of plan: RunPlan, jobs: Int, launcher: some CaseLaunching, journal: RunJournal?,
        events: (RunEvent) -> Void
    ) -> [(Int, CaseResult)] {
        let total = plan.cases.count
        let next = Atomic<Int>(0)
        let finished = Mutex<[(Int, CaseResult)]>([])
        let announce = Mutex<Void>(())
        withoutActuallyEscaping(events) { events in
            // Called under `announce` only, so from one thread at a time: the caller's closure need not be Sendable.
            nonisolated(unsafe) let events = events
            let report: @Sendable (RunEvent) -> Void = { event in announce.withLock { _ in events(event) } }
            DispatchQueue.concurrentPerform(iterations: min(jobs, positions.count)) { _ in
                while Interruption.signal == nil {
                    let slot = next.add(1, ordering: .relaxed).oldValue
                    guard slot < positions.count else { return }
                    let position = positions[slot]
                    let result = execute(
                        plan.cases[position], index: position, total: total, launcher: launcher, events: report)
                    journal?.record(result, at: position)
                    finished.withLock { $0.append((position, result)) }
                }
            }
        }
        return finished.withLock { $0 }
    }

    /// Runs one case (the `index`-th of `total`, from 0) and names its outcome.
    static func execute(
        _ spec: CaseSpec, index: Int, total: Int, launcher: some CaseLaunching, events: (RunEvent) -> Void
    ) -> CaseResult {
        events(.started(index: index + 1, total: total, spec: spec))
        let start = MonotonicClock.nanoseconds()
        var result = CaseResult(
            scenario: spec.scenario, workload: spec.workload, strategy: spec.strategy, repetition: spec.repetition,
            expectation: spec.expectation, outcome: launcher.launch(spec))
        result.attributed = spec.attribution != nil
        let elapsed = MonotonicClock.nanoseconds() - start
        result.wallNanoseconds = elapsed
        events(.finished(index: index + 1, total: total, result: result, elapsedNanoseconds: elapsed))
        return result
    }
}
