import Foundation
import HarnessCore
import HarnessModel
import Workloads

// memharness-bench: benchmarks that print ratios measured side by side in one run.
//
//   memharness-bench [sampling] [--rounds N] [--out DIR]
//
// `sampling`: the allocation-heavy calibration strategy (`churn`) with the sampler off and at 1 ms,
// alternating, each case in its own child process as in a real run. Prints the ratio of median
// times and writes DIR/sampling-overhead.md (default DIR: Reports/benchmarks).

struct BenchOptions {
    var benchmarks: [String] = []
    var rounds = 11
    var out = "Reports/benchmarks"

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--rounds": rounds = iterator.next().flatMap(Int.init) ?? rounds
            case "--out": out = iterator.next() ?? out
            default: benchmarks.append(argument)
            }
        }
        if benchmarks.isEmpty { benchmarks = ["sampling"] }
    }
}

let options = BenchOptions(Array(CommandLine.arguments.dropFirst()))
let selfPath = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
let launcher = CaseLauncher(executable: URL(fileURLWithPath: selfPath).deletingLastPathComponent().appendingPathComponent("memharness").path)
try FileManager.default.createDirectory(atPath: options.out, withIntermediateDirectories: true)

for benchmark in options.benchmarks {
    switch benchmark {
    case "sampling":
        let text = SamplingOverheadBenchmark.run(launcher: launcher, rounds: options.rounds)
        print(text)
        try text.write(toFile: "\(options.out)/sampling-overhead.md", atomically: true, encoding: .utf8)
    default:
        FileHandle.standardError.write(Data("unknown benchmark '\(benchmark)'; expected one of: sampling\n".utf8))
        exit(64)
    }
}
