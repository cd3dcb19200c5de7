import BuiltInWorkloads
import Foundation
import HarnessModel
import Measurement
import Runner
import Scenarios
import StoreObserverWorkload
import WorkloadKit

#if !os(Linux)
    #error("memharness builds on Linux only: the benchmarks link jemalloc and read /proc")
#endif

// memharness-bench: benchmarks that print ratios measured side by side in one run.
//
//   memharness-bench [sampling] [differ] [overhead] [accuracy] [variation] [stability] [floor] [attribution]
//                    [sweep] [--rounds N] [--tool-rounds N] [--repeat N] [--runs N] [--accuracy-rounds N]
//                    [--no-tools] [--scenarios-dir DIR] [--out DIR]
//
// `sampling`: the allocation-heavy calibration strategy (`churn`) with the sampler off and at 1 ms,
// alternating, each case in its own child process as in a real run. Prints the ratio of median
// times and writes DIR/sampling-overhead.md (default DIR: Reports/benchmarks).
// `differ`: the store observer's Differ on 25k-200k items: time and bytes allocated per diff,
// and how they scale; writes DIR/differ.md.
// `overhead`: wall and CPU time of `churn` and of the live-query workload uninstrumented, sampled
// at 1 ms, exact (`--peak exact`, the agent preloaded), under valgrind massif and under heaptrack;
// DIR/overhead.md.
// `accuracy`: peaks of a hold, 200 short spikes and a cross-thread queue (known truths) from the
// sampler, exact mode, massif and heaptrack; DIR/accuracy.md. `--no-tools` leaves massif and heaptrack out.
// `variation`: `memharness run --repeat N` (default 5) over every shipped scenario and the coefficient of
// variation of each strategy's peak; DIR/variation.md.
// `stability`: the gates on N unchanged runs and N runs with a real 5% regression (`--runs N`, default 20)
// of a small calibration scenario with `repetitions: auto`, against a baseline whose tolerances are derived
// from the measured noise; false failures and regressions caught per gate; DIR/stability.md.
// `attribution`: the churn and live-query workloads uninstrumented, sampled, with allocation stacks at three
// mean intervals (and with --peak exact), under massif and heaptrack; and the error of the top site on known
// holds at each interval; DIR/attribution.md. `--accuracy-rounds N` (default 5) runs per hold and interval.
// `floor`: holds of 1 KiB, 16 KiB and 256 KiB and the churn loop, sampled and exact, `--rounds` runs each
// (default 11), with the truth and the uncertainty the cases stated; DIR/floor.md.
// `sweep`: a 1,000-case sweep run uninterrupted, interrupted by SIGINT halfway and resumed: the parent's peak
// resident memory, and the resumed report against the uninterrupted one (exactly, by replay); DIR/sweep.md.
// `corpus`: real programs (the toolchain's swift-package, swift-format, sourcekit-lsp, docc; make, xz, git, perl,
// sqlite3, node, java...) plainly and under `memharness profile` in every mode: same exit status and output, no hang,
// no residue, no process left; DIR/agent-corpus.md (not part of the default set: `make bench-corpus`).
// `real-programs`: the corpus's Swift programs under `profile --heap-graph`: the heap at exit named, leaks with their
// allocation sites, wall times against the program alone (`--rounds`, at most 3); and the subscriptions
// scenario's own captures; DIR/real-programs.md (on request: `make bench-real-programs`).
// `server-throughput`: the Hummingbird example server (`--server PATH`, default its release build) under load from
// memharness-load on port `--port` (default 18432), alone, sampled at 1 ms and at 10 ms, with exact counts and with the heap capture
// at exit, `--rounds` rounds interleaved (at least 5); requests/s and their ratios against the 5% bar, and the capture's
// pause; DIR/server-throughput.md (on request: `make bench-server-throughput`).
// The binaries memharness and memharness-agent must sit beside this one (`make bench` builds them).

struct BenchOptions {
    static let all = [
        "sampling", "differ", "overhead", "accuracy", "variation", "stability", "floor", "attribution", "sweep",
    ]
    /// Benchmarks run only when named.
    static let onRequest = ["corpus", "real-programs", "server-throughput"]
    var benchmarks: [String] = []
    var rounds = 11
    var toolRounds = 1
    var repetitions = 5
    var runs = 20
    var accuracyRounds = 5
    var tools = true
    var scenariosDirectory = "Scenarios"
    var out = "Reports/benchmarks"
    var server = "Examples/ServerLeaks/.build/release/server-leaks"
    var port = 18_432

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--rounds": rounds = iterator.next().flatMap(Int.init) ?? rounds
            case "--tool-rounds": toolRounds = iterator.next().flatMap(Int.init) ?? toolRounds
            case "--repeat": repetitions = iterator.next().flatMap(Int.init) ?? repetitions
            case "--runs": runs = iterator.next().flatMap(Int.init) ?? runs
            case "--accuracy-rounds": accuracyRounds = iterator.next().flatMap(Int.init) ?? accuracyRounds
            case "--no-tools": tools = false
            case "--scenarios-dir": scenariosDirectory = iterator.next() ?? scenariosDirectory
            case "--out": out = iterator.next() ?? out
            case "--server": server = iterator.next() ?? server
            case "--port": port = iterator.next().flatMap(Int.init) ?? port
            default: benchmarks.append(argument)
            }
        }
        if benchmarks.isEmpty { benchmarks = Self.all }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("memharness-bench: \(message)\n".utf8))
    exit(64)
}

let options = BenchOptions(Array(CommandLine.arguments.dropFirst()))
if let unknown = options.benchmarks.first(where: { !(BenchOptions.all + BenchOptions.onRequest).contains($0) }) {
    fail(
        "unknown benchmark '\(unknown)'; expected one of: \((BenchOptions.all + BenchOptions.onRequest).joined(separator: ", "))"
    )
}
let environment = try BenchEnvironment.current()
// Cleanup at exit: a scratch folder that cannot be removed is temporary files, left to the system.
defer { try? FileManager.default.removeItem(at: environment.scratch) }
var modes: [Mode] = []
if ["overhead", "accuracy", "attribution"].contains(where: options.benchmarks.contains) {
    modes = options.tools ? Mode.allCases : [.uninstrumented, .sampled, .exact]
} else if options.benchmarks.contains("floor") {
    modes = [.sampled, .exact]
}
// The server benchmark needs no memharness: it names what it misses itself (the server, the load client, the agent).
let problems = options.benchmarks == ["server-throughput"] ? [] : environment.missing(for: modes)
if !problems.isEmpty { fail(problems.joined(separator: "\n")) }
if modes.contains(.massif) { try environment.prepareMassifBinary() }
try FileManager.default.createDirectory(atPath: options.out, withIntermediateDirectories: true)

for benchmark in options.benchmarks {
    let loadBefore = Bench.loadAverage()
    switch benchmark {
    case "sampling":
        let text = SamplingOverheadBenchmark.run(
            launcher: environment.launcher(.uninstrumented), rounds: options.rounds)
        try Bench.publish(text, name: "sampling-overhead.md", directory: options.out, loadBefore: loadBefore)
    case "differ":
        try Bench.publish(try DifferBenchmark.run(), name: "differ.md", directory: options.out, loadBefore: loadBefore)
    case "overhead":
        let text = try OverheadBenchmark.run(
            environment, rounds: max(3, options.rounds / 2), toolRounds: options.toolRounds, tools: options.tools,
            scenariosDirectory: options.scenariosDirectory)
        try Bench.publish(text, name: "overhead.md", directory: options.out, loadBefore: loadBefore)
    case "accuracy":
        try Bench.publish(
            AccuracyBenchmark.run(environment, rounds: 3, tools: options.tools), name: "accuracy.md",
            directory: options.out, loadBefore: loadBefore)
    case "variation":
        let text = try VariationBenchmark.run(
            environment, repetitions: options.repetitions, scenariosDirectory: options.scenariosDirectory)
        try Bench.publish(text, name: "variation.md", directory: options.out, loadBefore: loadBefore)
    case "stability":
        try Bench.publish(
            try StabilityBenchmark.run(environment, runs: max(1, options.runs)), name: "stability.md",
            directory: options.out, loadBefore: loadBefore)
    case "floor":
        let text = FloorBenchmark.run(environment, rounds: options.rounds, churnOperations: 1_000_000)
        try Bench.publish(text, name: "floor.md", directory: options.out, loadBefore: loadBefore)
    case "attribution":
        let text = try AttributionBenchmark.run(
            environment, rounds: max(3, options.rounds / 2), toolRounds: options.toolRounds,
            accuracyRounds: max(1, options.accuracyRounds), tools: options.tools,
            scenariosDirectory: options.scenariosDirectory)
        try Bench.publish(text, name: "attribution.md", directory: options.out, loadBefore: loadBefore)
    case "sweep":
        try Bench.publish(
            try SweepBenchmark.run(environment), name: "sweep.md", directory: options.out, loadBefore: loadBefore)
    case "corpus":
        try Bench.publish(
            try CorpusBenchmark.run(environment), name: "agent-corpus.md", directory: options.out,
            loadBefore: loadBefore)
    case "real-programs":
        try Bench.publish(
            try RealProgramsBenchmark.run(environment, rounds: min(options.rounds, 3)),
            name: "real-programs.md", directory: options.out, loadBefore: loadBefore)
    case "server-throughput":
        do {
            try Bench.publish(
                try ServerThroughputBenchmark.run(environment.serverSettings(options)), name: "server-throughput.md",
                directory: options.out, loadBefore: loadBefore)
        } catch {
            FileHandle.standardError.write(Data("memharness-bench: server-throughput: \(error)\n".utf8))
            exit(1)
        }
    default:
        break
    }
}
