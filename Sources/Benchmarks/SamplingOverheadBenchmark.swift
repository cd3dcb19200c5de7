import Foundation
import HarnessModel
import Measurement
import Reports
import Runner

/// Sampler overhead on an allocation-heavy workload: the `churn` strategy timed with the sampler
/// off and at 1 ms, alternating case by case so machine drift hits both alike.
enum SamplingOverheadBenchmark {
    static func spec(interval: Duration, operations: Int) -> CaseSpec {
        var spec = Bench.churn(operations, scenario: "sampling-overhead")
        spec.samplingIntervalNanoseconds = interval.nanoseconds
        return spec
    }

    /// Runs `rounds` pairs and returns a Markdown table with the medians and their ratio.
    static func run(launcher: ProcessCaseLauncher, rounds: Int) -> String {
        let operations = 20_000_000
        var off: [Double] = []
        var on: [Double] = []
        var samples: [Double] = []
        var achieved: [Double] = []
        var samplerBytes = 0
        // One warm-up pair, not counted: the first child pays for cold caches and page faults.
        _ = launcher.run(spec(interval: .zero, operations: operations / 10))
        _ = launcher.run(spec(interval: .milliseconds(1), operations: operations / 10))
        for round in 0..<rounds {
            // Alternate which goes first so neither always runs on a warmer machine.
            let order: [Duration] = round % 2 == 0 ? [.zero, .milliseconds(1)] : [.milliseconds(1), .zero]
            for interval in order {
                let result = launcher.run(spec(interval: interval, operations: operations))
                guard let m = result.completed, let phase = m.phases.first(where: { $0.name == "allocate" }) else {
                    return "sampling benchmark failed: \(result.status.rawValue) \(result.failureText ?? "")"
                }
                let seconds = Double(phase.endNanoseconds - phase.startNanoseconds) / 1e9
                if interval == .zero {
                    off.append(seconds)
                } else {
                    on.append(seconds)
                    samples.append(Double(m.sampling.sampleCount))
                    achieved.append(Double(m.sampling.achievedIntervalNanoseconds))
                    samplerBytes = max(samplerBytes, m.sampling.samplerAllocatedBytes)
                }
            }
        }
        let medianOff = Statistics.median(off) ?? 0
        let medianOn = Statistics.median(on) ?? 0
        let ratio = medianOff > 0 ? medianOn / medianOff : 0
        func seconds(_ value: Double) -> String { Units.fixed(value, decimals: 3) + " s" }
        let opsPerSecond = medianOff > 0 ? Double(operations) / medianOff / 1e6 : 0
        return """
            # Sampling overhead

            Allocation-heavy workload: calibration `churn`, \(operations) malloc/free pairs of 16 B–4 KiB on one \
            thread (\(Units.fixed(opsPerSecond, decimals: 1)) M pairs/s unsampled), each case in its own child \
            process, \(rounds) rounds alternating sampler off / sampler at 1 ms. Time is the `allocate` phase's \
            wall time.

            | Sampler | Median time | Min | Max | Samples (median) | Achieved interval |
            |---|---:|---:|---:|---:|---:|
            | off | \(seconds(medianOff)) | \(seconds(off.min() ?? 0)) | \(seconds(off.max() ?? 0)) | – | – |
            | 1 ms | \(seconds(medianOn)) | \(seconds(on.min() ?? 0)) | \(seconds(on.max() ?? 0)) | \
            \(Units.fixed(Statistics.median(samples) ?? 0, decimals: 0)) | \
            \(Units.formatDuration(nanoseconds: Int64(Statistics.median(achieved) ?? 0))) |

            **Ratio (1 ms / off): \(Units.fixed(ratio, decimals: 3))** (target: at most 1.020). \
            The sampler thread allocated \(samplerBytes) bytes while sampling.

            """
    }
}
