import Foundation
import HarnessModel
import History
import WorkloadKit

// history-bench: the history's change-point detection on seeded synthetic series with known steps, and the
// store at scale (10,000 runs of 100 figures: `record` and `show` timed). Prints Markdown tables.
//
//   history-bench [detection] [scale] [--trials N] [--runs N] [--seed N] [--keep DIR]
//
// `make bench-history` builds it in release and writes Reports/benchmarks/history-detection.md.

struct Options {
    var parts: [String] = []
    var trials = 1000
    var runs = 10_000
    var seed: UInt64 = 26
    /// Keep the scale benchmark's stores in this folder (to time the commands on them) instead of removing them.
    var keep: String?

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--trials": trials = iterator.next().flatMap(Int.init) ?? trials
            case "--runs": runs = iterator.next().flatMap(Int.init) ?? runs
            case "--seed": seed = iterator.next().flatMap(UInt64.init) ?? seed
            case "--keep": keep = iterator.next()
            default: parts.append(argument)
            }
        }
        if parts.isEmpty { parts = ["detection", "scale"] }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
print(
    "# History: change-point detection and scale\n\nWritten by `make bench-history` (`history-bench`, release build).\n"
)
if parts(options).contains("detection") { print(DetectionBench.run(trials: options.trials, seed: options.seed)) }
if parts(options).contains("scale") { print(try ScaleBench.run(runs: options.runs, keep: options.keep)) }

func parts(_ options: Options) -> [String] { options.parts }
