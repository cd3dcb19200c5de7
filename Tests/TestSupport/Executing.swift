import HarnessModel
import Measurement
import Testing
import WorkloadKit

extension CaseExecutor {
    /// Runs `spec` in this process with a scratch folder of `/tmp` and names its outcome.
    public func result(_ spec: CaseSpec, scratchDirectory: String = "/tmp") throws -> CaseResult {
        let outcome = try run(spec, in: CaseEnvironment(scratchDirectory: scratchDirectory))
        return CaseResult(
            scenario: spec.scenario, workload: spec.workload, strategy: spec.strategy, repetition: spec.repetition,
            expectation: spec.expectation, outcome: outcome)
    }

    /// Runs `spec` and returns its measurements, failing the test (with the reason) unless the case completed.
    public func measure(
        _ spec: CaseSpec, scratchDirectory: String = "/tmp", sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CaseMeasurements {
        let result = try result(spec, scratchDirectory: scratchDirectory)
        return try #require(
            result.completed, "\(result.label) did not complete: \(String(describing: result.failure))",
            sourceLocation: sourceLocation)
    }
}

/// Waits until `condition` holds, checking every 0.5 ms, for at most `seconds`; false when it never did.
/// Every wait of a test is bounded: a condition that never comes fails the test instead of hanging it.
public func waitUntil(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = MonotonicClock.nanoseconds() + Int64(seconds * 1e9)
    while !condition() {
        guard MonotonicClock.nanoseconds() < deadline else { return false }
        MonotonicClock.sleep(for: .microseconds(500))
    }
    return true
}
