import AllocatorProbe
import HarnessModel
import Measurement

#if os(Linux)
    import Glibc
#endif

/// Why a memory expectation could not measure. A limit that was broken is a recorded test failure
/// (a `MemoryFinding`), never this error.
public enum MemoryTestingError: Error, CustomStringConvertible, Sendable, Equatable {
    /// jemalloc is missing, lacks statistics, or does not serve this process's allocations.
    case allocator(AllocatorProbeError)
    /// The case sequence could not measure (the sampler's thread or storage could not be made).
    case measurement(MeasurementError)
    /// The expectation ran outside a test it could identify (`Test.current` was nil).
    case notInTest(function: String)
    /// A limit or count the expectation was given makes no sense.
    case invalidArgument(String)
    /// This test binary could not be run again (its path could not be read, or spawning failed).
    case replicaNotStarted(executable: String, errno: Int32)
    /// The replica ran past the time limit and was killed with everything it started.
    case replicaTimedOut(test: String, limitNanoseconds: Int64, output: String)
    /// The replica was killed by a signal before it measured.
    case replicaCrashed(test: String, signal: Int32, output: String)
    /// The replica ran the test to its end (or stopped) without reaching this expectation.
    case replicaDidNotReach(test: String, site: String, occurrence: Int, exitStatus: Int32, output: String)
    /// The replica measured but could not measure properly, or wrote a result that cannot be read.
    case replicaFailed(test: String, reason: String)
    /// Another expectation measuring in this process held the meter longer than the time limit.
    case meterBusy(limitNanoseconds: Int64)
    /// `expectMemory(of:strategy:)` could not resolve the run: an unknown strategy, parameter or step, a bad value,
    /// a scenario file that cannot be read; the message is the scenario parser's, with the place and valid choices.
    case workloadRun(String)

    /// What went wrong and how to fix it.
    public var description: String {
        switch self {
        case .allocator(let error):
            return "memory expectations read jemalloc's statistics, so jemalloc must be the allocator of the test "
                + "executable (a test target depending on MemHarnessTesting links it): \(error)"
        case .measurement(let error):
            return "could not measure: \(error)"
        case .notInTest(let function):
            return "\(function) must run inside a test it can identify: call expectMemory from a Swift Testing @Test "
                + "(not from a detached task or another thread, where Test.current is nil), or in an XCTestCase call "
                + "self.expectMemory"
        case .invalidArgument(let detail):
            return "invalid memory expectation: \(detail)"
        case .replicaNotStarted(let executable, let errno):
            return
                "could not run the test binary \(executable) again for a replica: \(String(cString: strerror(errno))) "
                + "(errno \(errno)); to measure in this process instead (honest only when no other test runs "
                + "meanwhile) pass measuring: .thisProcess"
        case .replicaTimedOut(let test, let limit, let output):
            return "the replica of \(test) did not finish the measured closure within "
                + "\(Units.formatDuration(nanoseconds: limit)) and was killed; raise MemoryMeasuring.timeLimit if the "
                + "test is this slow, or look for a wait that never ends in a fresh process" + Self.tail(output)
        case .replicaCrashed(let test, let signal, let output):
            return "the replica of \(test) was killed by signal \(signal) before it measured; run the test alone "
                + "(swift test --filter) to see the crash" + Self.tail(output)
        case .replicaDidNotReach(let test, let site, let occurrence, let status, let output):
            return "the replica of \(test) exited with status \(status) without reaching this expectation (\(site), "
                + "run \(occurrence + 1) of that line in the test): the test takes another path in a fresh process "
                + "running it alone. Does it depend on other tests, on files or state left by an earlier run, or on "
                + "parameterized arguments whose descriptions change between processes? Make it self-contained, or "
                + "pass measuring: .thisProcess with swift test --no-parallel" + Self.tail(output)
        case .replicaFailed(let test, let reason):
            return "the replica of \(test) could not measure: \(reason)"
        case .workloadRun(let detail):
            return "cannot run the workload: \(detail)"
        case .meterBusy(let limit):
            return "another expectation measured in this process for over \(Units.formatDuration(nanoseconds: limit)); "
                + "expectations measuring in this process run one at a time"
        }
    }

    /// What the replica said about failures (a test runner's failure lines, a fatal error), else its last
    /// lines; at most 8 lines, for a message.
    static func tail(_ output: String) -> String {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: true)
        let markers = ["\u{2718}", "error", "Fatal error", "failed", "Crash"]
        let failures = lines.filter { line in markers.contains { line.contains($0) } }
        let shown = (failures.isEmpty ? lines : failures).suffix(8)
        return shown.isEmpty ? "" : "\nThe replica said:\n" + shown.joined(separator: "\n")
    }
}
