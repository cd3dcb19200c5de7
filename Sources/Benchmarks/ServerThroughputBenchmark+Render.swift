import Foundation
import HarnessModel
import Measurement

extension ServerThroughputBenchmark {
    /// The bar: measuring a server under load (a server strategy's way) costs at most 5% of its throughput.
    static let serverBar = 0.95

    static func render(_ rounds: [Round], _ settings: Settings) -> String {
        let alone = rounds.filter { $0.way == .alone }.map(\.requestsPerSecond)
        let reference = Statistics.median(alone) ?? 0
        let serverRatio =
            (Statistics.median(rounds.filter { $0.way == .server }.map(\.requestsPerSecond)) ?? 0)
            / max(reference, 1)
        let pairedServer = Statistics.median(pairedRatios(.server, rounds)) ?? 0
        let verdict = serverRatio >= serverBar && pairedServer >= serverBar ? "PASS" : "FAIL"
        let server = URL(fileURLWithPath: settings.server).lastPathComponent
        var lines = [
            "# Server throughput under measurement", "",
            "`\(server)` (Examples/ServerLeaks, Hummingbird, release build) on GET \(settings.path), loaded by "
                + "`memharness-load` over \(settings.connections) keep-alive connections on 127.0.0.1 for "
                + "\(settings.loadMilliseconds) ms after a warm-up of \(settings.warmupMilliseconds) ms (not counted), "
                + "started anew for every run, \(settings.rounds) rounds of the \(Way.allCases.count) ways "
                + "interleaved (the first way rotating), after one uncounted run of each. Requests/s: requests "
                + "answered over the load's duration. Server CPU: the server's CPU time (every thread) during the "
                + "load; sampler CPU: the agent's sampler thread's (`memharness-smp`), from /proc; sampler / server CPU: the median of the rounds' shares. Ratios are the "
                + "medians' ratio and, in brackets, the median of the rounds' own ratios (each against the same round's server alone).",
            "",
            "| Way | Requests/s (median) | Min | Max | Spread | Ratio to alone | Samples during load | "
                + "Allocations/request | Server CPU | Sampler CPU | Sampler / server CPU | Stop (median) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for way in Way.allCases { lines.append(row(way, rounds, reference: reference)) }
        lines += [
            "",
            "**Server strategy / alone: \(Units.fixed(serverRatio, decimals: 3)) (medians), "
                + "\(Units.fixed(pairedServer, decimals: 3)) (the rounds' own ratios' median) — \(verdict)** (bar: "
                + "both at least \(Units.fixed(serverBar, decimals: 2)): measuring a server under load costs at most "
                + "5% of its throughput). The rounds' own ratios: "
                + "\(pairedRatios(.server, rounds).map { Units.fixed($0, decimals: 3) }.joined(separator: ", ")).",
            "",
        ]
        lines += captureLines(rounds)
        lines += roundLines(rounds)
        return lines.joined(separator: "\n") + "\n"
    }

    /// A way's row: requests/s median, min, max, spread ((max - min) / median), ratios, the agent's samples and counts
    /// during the load, the stop's time.
    static func row(_ way: Way, _ rounds: [Round], reference: Double) -> String {
        let mine = rounds.filter { $0.way == way }
        let values = mine.map(\.requestsPerSecond)
        let median = Statistics.median(values) ?? 0
        let spread = median > 0 ? ((values.max() ?? 0) - (values.min() ?? 0)) / median * 100 : 0
        let paired = Statistics.median(pairedRatios(way, rounds)) ?? 0
        let samples = Statistics.median(mine.compactMap(\.samples).map(Double.init))
        let allocations = Statistics.median(mine.compactMap(\.allocationsPerRequest))
        let stop = Statistics.median(mine.map(\.stopSeconds)) ?? 0
        let serverCPU = Statistics.median(mine.map(\.serverCPUSeconds)) ?? 0
        let samplerCPU = Statistics.median(mine.compactMap(\.samplerCPUSeconds))
        let share = Statistics.median(
            mine.compactMap { round in
                round.samplerCPUSeconds.flatMap { round.serverCPUSeconds > 0 ? $0 / round.serverCPUSeconds : nil }
            })
        return
            "| \(way.label) | \(Units.fixed(median, decimals: 0)) | \(Units.fixed(values.min() ?? 0, decimals: 0)) | "
            + "\(Units.fixed(values.max() ?? 0, decimals: 0)) | \(Units.fixed(spread, decimals: 1))% | "
            + "\(Units.fixed(median / max(reference, 1), decimals: 3)) (\(Units.fixed(paired, decimals: 3))) | "
            + "\(samples.map { Units.fixed($0, decimals: 0) } ?? "–") | "
            + "\(allocations.map { Units.fixed($0, decimals: 1) } ?? "–") | \(Bench.seconds(serverCPU)) | "
            + "\(samplerCPU.map(Bench.seconds) ?? "–") | \(share.map { Units.fixed($0 * 100, decimals: 1) + "%" } ?? "–") | "
            + "\(Bench.seconds(stop)) |"
    }

    /// Each round's requests/s of `way` over the same round's server alone.
    static func pairedRatios(_ way: Way, _ rounds: [Round]) -> [Double] {
        let count = Way.allCases.count
        return stride(from: 0, to: rounds.count - count + 1, by: count).compactMap { start in
            let round = rounds[start..<start + count]
            guard let alone = round.first(where: { $0.way == .alone }), alone.requestsPerSecond > 0,
                let mine = round.first(where: { $0.way == way })
            else { return nil }
            return mine.requestsPerSecond / alone.requestsPerSecond
        }
    }

    /// The heap capture at exit: the stop's time against exact counting's, and the capture's size.
    static func captureLines(_ rounds: [Round]) -> [String] {
        let exactStop = Statistics.median(rounds.filter { $0.way == .server }.map(\.stopSeconds)) ?? 0
        let heap = rounds.filter { $0.way == .heapAtExit }
        let heapStop = Statistics.median(heap.map(\.stopSeconds)) ?? 0
        let size = Statistics.median(heap.compactMap(\.captureBytes).map(Double.init)) ?? 0
        return [
            "Heap capture at exit (the capture a server case takes when it stops; captures between load rounds, "
                + "`capture: rounds`, hold the server while they are named: their pause is the case's "
                + "`heapCapturePause`, see Examples/ServerLeaks/README.md): from SIGTERM to the server's end took \(Bench.seconds(heapStop)) (median) with the "
                + "capture against \(Bench.seconds(exactStop)) without it, so the capture paused the "
                + "ending server for about \(Bench.seconds(max(heapStop - exactStop, 0))); it wrote "
                + "\(Units.formatBytes(size)) (median). The naming of the capture by `memharness` (the program "
                + "held at exit) is not in it.",
            "",
        ]
    }

    /// Every round's requests/s, in the order run: the noise the medians hide.
    static func roundLines(_ rounds: [Round]) -> [String] {
        let ways = Way.allCases
        var lines = [
            "Requests/s of every round (errors: \(rounds.map(\.errors).reduce(0, +))):", "",
            "| Round | " + ways.map(\.label).joined(separator: " | ") + " |",
            "|---:|" + String(repeating: "---:|", count: ways.count),
        ]
        for (index, start) in stride(from: 0, to: rounds.count, by: ways.count).enumerated() {
            let round = rounds[start..<min(start + ways.count, rounds.count)]
            let cells = ways.map { way in
                round.first { $0.way == way }.map { Units.fixed($0.requestsPerSecond, decimals: 0) } ?? "–"
            }
            lines.append("| \(index + 1) | " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }
}
