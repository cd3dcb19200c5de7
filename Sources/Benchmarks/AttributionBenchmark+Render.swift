import Foundation
import HarnessModel
import Runner

extension AttributionBenchmark {
    static func median(_ runs: [TimedRun], _ figure: (TimedRun) -> Double) -> Double {
        Statistics.median(runs.map(figure)) ?? 0
    }

    /// Median case wall time of `row` over its reference's (the uninstrumented runs of the same size).
    static func wallRatio(_ row: Row) -> Double? {
        let reference = median(row.reference, \.caseWallSeconds)
        guard !row.runs.isEmpty, reference > 0 else { return nil }
        return median(row.runs, \.caseWallSeconds) / reference
    }

    /// The fastest run's case wall time: on a shared machine, the run least disturbed by others.
    static func fastest(_ runs: [TimedRun]) -> Double { runs.map(\.caseWallSeconds).min() ?? 0 }

    /// The median of `row`'s per-round wall ratios to the uninstrumented run beside it.
    static func pairedRatio(_ row: Row) -> Double? { Statistics.median(row.pairedWallRatios) }

    static func render(
        _ rows: [Row], accuracy: [(Truth, [Configuration: [TimedRun]])], problems: [String], liveQuery: CaseSpec
    ) -> String {
        var out = ["# Attribution: what recording allocation stacks costs, and the default sampling interval", ""]
        out.append(contentsOf: costLines(rows, liveQuery: liveQuery))
        out.append(contentsOf: topSiteLines(rows))
        out.append(contentsOf: accuracyLines(accuracy))
        out.append(contentsOf: verdictLines(rows, accuracy: accuracy))
        if !problems.isEmpty {
            out.append("Runs that did not complete: " + problems.map { "`\($0)`" }.joined(separator: "; ") + ".")
            out.append("")
        }
        return out.joined(separator: "\n")
    }

    static func costLines(_ rows: [Row], liveQuery: CaseSpec) -> [String] {
        var out = [
            "## Cost", "",
            "Each case runs in its own child process, the configurations alternating round by round. **Case wall** and "
                + "**case CPU** are measured inside the child from the start of setup to the end of teardown; ratios are to "
                + "the uninstrumented runs of the same size (medians). On a shared machine whose speed drifts, two more: "
                + "**paired ×**, the median over rounds of the case wall time over the uninstrumented run of the same round (the "
                + "two ran one after the other), and **fastest ×**, the quickest run over the quickest uninstrumented run (each "
                + "the run least disturbed by other processes). An attributed case runs as `run --attribute` runs it: "
                + "the agent preloaded, stacks sampled by bytes (Poisson, the mean given), frame-pointer walks, the live "
                + "bytes per stack kept, the peak snapshot driven by the 1 ms sampler; `+ exact` also counts every "
                + "allocation (`--peak exact --attribute`). **Process wall** times the child from spawn to exit and, for "
                + "attributed cases, symbolizing its record afterwards (llvm-symbolizer, demangling).",
            "",
            "- `churn`: calibration, malloc/free pairs of 16 B–4 KiB with 64 alive, one thread. The tools get 1 M pairs.",
            "- `live-query`: Scenarios/live-query.yaml, `unbounded-dispatch`, burst shortened to 1 s ("
                + liveQuery.steps.map(\.phase).joined(separator: " → ")
                + "). Paced: its CPU time moves, its wall time hardly.",
            "- heaptrack and massif also record a stack for every allocation (massif: `--peak-inaccuracy=0`, jemalloc "
                + "replaced by massif's allocator), as in overhead.md.",
            "",
            "| Workload | Configuration | Work done | Case wall | × | Case CPU | × | Paired × | Fastest × | Process wall | Runs |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for row in rows {
            guard !row.runs.isEmpty else {
                out.append("| \(row.workload) | \(row.configuration.label) | – | – | – | – | – | – | – | – | 0 |")
                continue
            }
            let cpu = median(row.runs, \.caseCPUSeconds)
            out.append(
                "| \(row.workload) | \(row.configuration.label) | \(OverheadBenchmark.work(row.runs)) | "
                    + "\(Bench.seconds(median(row.runs, \.caseWallSeconds))) | \(wallRatio(row).map(ratio) ?? "–") | "
                    + "\(Bench.seconds(cpu)) | \(Bench.ratio(cpu, median(row.reference, \.caseCPUSeconds))) | "
                    + "\(pairedRatio(row).map(ratio) ?? "–") | \(Bench.ratio(fastest(row.runs), fastest(row.reference))) | "
                    + "\(Bench.seconds(median(row.runs) { Double($0.processWallNanoseconds) / 1e9 })) | \(row.runs.count) |"
            )
        }
        out.append("")
        return out
    }

    /// The live-query's top site at each mean: the answer should not depend on it.
    static func topSiteLines(_ rows: [Row]) -> [String] {
        let attributed = rows.filter { $0.workload == "live-query" && $0.configuration.stackMean != nil }
        guard !attributed.isEmpty else { return [] }
        var out = [
            "The live query's top allocation site at the peak in each attributed run (site, its share of the sampled live "
                + "bytes, the sampled total against the measured peak above the baseline):",
            "", "| Configuration | Top site | Share | Sampled / measured peak |", "|---|---|---:|---:|",
        ]
        for row in attributed {
            for run in row.runs {
                guard let profile = run.result.measurements?.profile, let top = profile.siteTable(limit: 1).rows.first
                else { continue }
                out.append(
                    "| \(row.configuration.label) | `\(top.site.function)` (\(top.site.shortLocation)) | "
                        + "\(Units.fixed(top.shareOfPeak * 100, decimals: 1))% | "
                        + "\(Units.formatBytes(profile.sampledPeakLiveBytes)) / \(Units.formatBytes(profile.peakNetBytes)) |"
                )
            }
        }
        out.append("")
        return out
    }

    static func accuracyLines(_ accuracy: [(Truth, [Configuration: [TimedRun]])]) -> [String] {
        var out = [
            "## Accuracy of the top site", "",
            "Calibration holds with a known truth at one site, `CalibrationCase.hold(_:)`: the blocks' size-class bytes. "
                + "Each cell: the median relative error of that site's live bytes at the peak over the runs, then the worst. "
                + "A block of s bytes is sampled with probability 1 − exp(−s/mean) and weighed by its inverse, so blocks much "
                + "larger than the mean are exact and the error of many small ones shrinks as 1/√(bytes/mean).",
            "",
            "| Held | Truth | " + means.map { "\(Units.formatBytes($0)) mean" }.joined(separator: " | ") + " |",
            "|---|---:|" + String(repeating: "---:|", count: means.count),
        ]
        for (truth, runs) in accuracy {
            let cells = attributed.map { configuration -> String in
                let errors = (runs[configuration] ?? []).compactMap { error($0, truth: truth) }.map(abs)
                guard let middle = Statistics.median(errors), let worst = errors.max() else { return "–" }
                return "\(percent(middle)) (\(percent(worst)), \(errors.count) runs)"
            }
            out.append("| \(truth.name) | \(Units.formatBytes(truth.bytes)) | " + cells.joined(separator: " | ") + " |")
        }
        out.append("")
        return out
    }

    static func verdictLines(_ rows: [Row], accuracy: [(Truth, [Configuration: [TimedRun]])]) -> [String] {
        func churn(_ configuration: Configuration) -> Row? {
            rows.first { $0.workload.hasPrefix("churn, 20") && $0.configuration == configuration }
        }
        func paired(_ configuration: Configuration) -> Double? { churn(configuration).flatMap(pairedRatio) }
        /// Median case figure of `configuration` over `base`'s, on the 20 M churn.
        func over(_ configuration: Configuration, _ base: Configuration, _ figure: (TimedRun) -> Double) -> String {
            guard let row = churn(configuration), let reference = churn(base), !row.runs.isEmpty else { return "–" }
            return Bench.ratio(median(row.runs, figure), median(reference.runs, figure))
        }
        func fastestOver(_ configuration: Configuration, _ base: Configuration) -> String {
            guard let row = churn(configuration), let reference = churn(base), !row.runs.isEmpty else { return "–" }
            return Bench.ratio(fastest(row.runs), fastest(reference.runs))
        }
        func toolRatio(_ mode: Mode) -> String {
            rows.first { $0.workload.hasPrefix("churn, 1 ") && $0.configuration.mode == mode }.flatMap(wallRatio)
                .map(ratio) ?? "–"
        }
        let defaultMean = AttributionRequest.defaultSampleMeanBytes
        let defaultConfiguration = Configuration(mode: .sampled, stackMean: defaultMean)
        var out = ["## Verdict", ""]
        out.append(
            "**Churn, 20 M pairs:** attribution at the default \(Units.formatBytes(defaultMean)) mean takes "
                + "\(paired(defaultConfiguration).map(ratio) ?? "–") the wall time of the uninstrumented run beside it "
                + "(paired, median over rounds; target at most \(Units.fixed(target, decimals: 1))x); "
                + "\(over(defaultConfiguration, uninstrumented, \.caseWallSeconds)) by the medians, "
                + "\(fastestOver(defaultConfiguration, uninstrumented)) by the fastest runs. The sampled run alone "
                + "(the 1 ms sampler every case of `run` has, the attributed one too: it drives the peak snapshot and the "
                + "memory limit) takes \(paired(sampled).map(ratio) ?? "–"). With `--peak exact` "
                + "\(paired(attributedExact).map(ratio) ?? "–"); heaptrack \(toolRatio(.heaptrack)) and "
                + "massif \(toolRatio(.massif)) (1 M pairs, medians).")
        out.append("")
        // The densest mean within the target: more samples, less error, as long as the cost stays under it.
        let withinTarget = means.filter {
            (paired(Configuration(mode: .sampled, stackMean: $0)) ?? .infinity) <= target
        }
        let per = means.map { mean -> String in
            let configuration = Configuration(mode: .sampled, stackMean: mean)
            let small = accuracy.first.flatMap { truth, runs in
                Statistics.median((runs[configuration] ?? []).compactMap { error($0, truth: truth) }.map(abs))
            }
            return "\(Units.formatBytes(mean)): churn \(paired(configuration).map(ratio) ?? "–") (paired), "
                + "\(accuracy.first?.0.name ?? "small blocks") off by \(small.map(percent) ?? "–")"
        }
        out.append(
            "**Default mean interval:** \(Units.formatBytes(defaultMean)) (`--stack-sample`, `attribution:`). "
                + per.joined(separator: "; ") + ". The densest mean within the cost target in this run: "
                + (withinTarget.min().map { Units.formatBytes($0) } ?? "none")
                + ". Blocks of 1 MiB and more are exact at every mean here; the mean trades the cost of each sampled "
                + "allocation (a frame-pointer walk and a table insert) against the error on sites made of many small "
                + "blocks, which shrinks as 1/√(site bytes / mean).")
        out.append("")
        return out
    }

    static func ratio(_ value: Double) -> String { Units.fixed(value, decimals: 2) + "x" }
    static func percent(_ fraction: Double) -> String { Units.fixed(fraction * 100, decimals: 1) + "%" }
}
