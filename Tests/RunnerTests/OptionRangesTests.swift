import Foundation
import HarnessModel
import Runner
import Scenarios
import Testing

/// The ranges `run` allows its options (one table with the scenario parser and the planner), checked before
/// any file is read, and `--jobs`.
struct OptionRangesTests {
    @Test func theDefaultsAndTheEdgesOfEveryRangeAreAllowed() {
        #expect(OptionRanges.problem() == nil)
        #expect(
            OptionRanges.problem(
                repetitions: .fixed(100), interval: .microseconds(50), timeout: .milliseconds(100), samplesMaxRows: 0,
                jobs: .count(64), stackSampleBytes: 1 << 10) == nil)
        #expect(
            OptionRanges.problem(
                repetitions: .fixed(1), interval: .seconds(10), timeout: .seconds(3600), jobs: .count(1),
                stackSampleBytes: 64 << 20) == nil)
        #expect(OptionRanges.problem(repetitions: .auto(AdaptiveRepetitions()), interval: .zero) == nil)
    }

    @Test(
        arguments: [
            (OptionRanges.problem(repetitions: .fixed(0)), "--repeat 0 is out of range; allowed: 1...100, or auto"),
            (OptionRanges.problem(repetitions: .fixed(101)), "--repeat 101 is out of range"),
            (OptionRanges.problem(repetitions: .fixed(-1)), "--repeat -1 is negative; allowed: 1...100, or auto"),
            (
                OptionRanges.problem(interval: .microseconds(10)),
                "--interval 10us is out of range; allowed: 0ms (off) or 50us...10s"
            ),
            (OptionRanges.problem(interval: .seconds(11)), "--interval 11s is out of range"),
            (
                OptionRanges.problem(interval: .milliseconds(-1)),
                "--interval -1ms is negative; allowed: 0ms (off) or 50us...10s"
            ),
            (
                OptionRanges.problem(timeout: .milliseconds(99)),
                "--timeout 99ms is out of range; allowed: 100ms...3600s"
            ),
            (OptionRanges.problem(timeout: .seconds(3601)), "--timeout 3601s is out of range"),
            (OptionRanges.problem(timeout: .seconds(-2)), "--timeout -2s is negative; allowed: 100ms...3600s"),
            (
                OptionRanges.problem(samplesMaxRows: -1),
                "--samples-max-rows -1 is negative; allowed: 0 (keep all) or more"
            ),
            (OptionRanges.problem(jobs: .count(0)), "--jobs 0 is out of range; allowed: 1...64 or auto"),
            (OptionRanges.problem(jobs: .count(65)), "--jobs 65 is out of range"),
            (
                OptionRanges.problem(stackSampleBytes: 1023),
                "--stack-sample 1023 bytes is out of range; allowed: 1KiB...64MiB"
            ),
        ] as [(String?, String)])
    func aValueOutOfItsRangeIsNamedWithWhatIsAllowed(problem: String?, message: String) throws {
        let text = try #require(problem)
        #expect(text.hasPrefix(message) || text.contains(message), "\(text)")
    }

    @Test func theTableWritesItsRangesAsOptionsTakeThem() {
        #expect(OptionRanges.text(OptionRanges.repetitions) == "1...100")
        #expect(OptionRanges.text(OptionRanges.timeout) == "100ms...3600s")
        #expect(OptionRanges.text(OptionRanges.interval) == "50us...10s")
        #expect(OptionRanges.bytesText(OptionRanges.stackSampleBytes) == "1KiB...64MiB")
        #expect(OptionRanges.problem(5, in: OptionRanges.repetitions) == nil)
        #expect(OptionRanges.problem(Duration.zero, in: OptionRanges.interval, offAllowed: true) == nil)
    }

    @Test func theFirstProblemIsTheOneReported() {
        #expect(OptionRanges.problem(repetitions: .fixed(0), jobs: .count(0))?.hasPrefix("--repeat") == true)
    }

    @Test func jobsReadsACountOrAuto() throws {
        #expect(JobCount(parsing: "auto") == .auto)
        #expect(JobCount(parsing: "3") == .count(3))
        #expect(JobCount(parsing: "three") == nil)
        #expect(JobCount(parsing: "") == nil)
        #expect(JobCount.count(5).resolved == 5)
        // auto: the CPUs this process may run on, never fewer than one.
        #expect(JobCount.auto.resolved >= 1)
        #expect(JobCount.auto.resolved == max(ProcessInfo.processInfo.activeProcessorCount, 1))
    }
}
