import HarnessModel
import Scenarios

extension OptionRanges {
    /// The first command-line option out of its range (`OptionRanges`), as a message naming the option, the
    /// value and what is allowed; nil when every value is allowed. Checked before any file is read.
    public static func problem(
        repetitions: RepetitionPolicy? = nil, interval: Duration? = nil, timeout: Duration? = nil,
        samplesMaxRows: Int = 0, jobs: JobCount = .auto, stackSampleBytes: Int = 64 << 10
    ) -> String? {
        if case .fixed(let count)? = repetitions,
            let problem = problem(count, in: Self.repetitions, allowed: text(Self.repetitions) + ", or auto")
        {
            return "--repeat " + problem
        }
        if let interval, let problem = problem(interval, in: Self.interval, offAllowed: true) {
            return "--interval " + problem
        }
        if let timeout, let problem = problem(timeout, in: Self.timeout) { return "--timeout " + problem }
        if samplesMaxRows < 0 {
            return "--samples-max-rows \(samplesMaxRows) is negative; allowed: 0 (keep all) or more"
        }
        if case .count(let count) = jobs,
            let problem = problem(count, in: Self.jobs, allowed: text(Self.jobs) + " or auto")
        {
            return "--jobs " + problem
        }
        if let problem = problem(
            stackSampleBytes, in: Self.stackSampleBytes, written: "\(stackSampleBytes) bytes",
            allowed: bytesText(Self.stackSampleBytes))
        {
            return "--stack-sample " + problem
        }
        return nil
    }
}
