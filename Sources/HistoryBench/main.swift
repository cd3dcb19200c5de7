import Foundation
import HarnessModel
import History
import WorkloadKit

// history-bench: the history's change-point detection on seeded synthetic series with known steps, and the
// store at scale (10,000 runs of 100 figures: `record` and `show` timed). Prints Markdown tables.
//
//   history-bench [detection] [recorded] [scale] [--trials N] [--runs N] [--seed N] [--keep DIR] [--series FILE]
//   history-bench export --recorded TEXT STORE...     (the recorded-series file of real runs' stores)
//
// `make bench-history` builds it in release and writes Reports/benchmarks/history-detection.md.

struct Options {
    var parts: [String] = []
    var trials = 1000
    var runs = 10_000
    var seed: UInt64 = 26
    /// Keep the scale benchmark's stores in this folder (to time the commands on them) instead of removing them.
    var keep: String?
    /// The recorded series (`make history-series`).
    var series = "Tests/HistoryTests/Fixtures/recorded-series.json"

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--trials": trials = iterator.next().flatMap(Int.init) ?? trials
            case "--runs": runs = iterator.next().flatMap(Int.init) ?? runs
            case "--seed": seed = iterator.next().flatMap(UInt64.init) ?? seed
            case "--keep": keep = iterator.next()
            case "--series": series = iterator.next() ?? series
            default: parts.append(argument)
            }
        }
        if parts.isEmpty { parts = ["detection", "recorded", "scale"] }
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "export", arguments.count >= 4, arguments[1] == "--recorded" {
    print(try SeriesExport.run(stores: Array(arguments[3...]), recorded: arguments[2]), terminator: "")
    exit(0)
}
let options = Options(arguments)
print(
    "# History: change-point detection and scale\n\nWritten by `make bench-history` (`history-bench`, release build).\n"
)
if parts(options).contains("detection") { print(DetectionBench.run(trials: options.trials, seed: options.seed)) }
if parts(options).contains("recorded") { print(try RecordedBench.run(file: options.series, seed: options.seed)) }
if parts(options).contains("scale") { print(try ScaleBench.run(runs: options.runs, keep: options.keep)) }

func parts(_ options: Options) -> [String] { options.parts }
