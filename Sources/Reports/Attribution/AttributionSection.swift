import Foundation
import HarnessModel

/// "Where the memory is" in a scenario's section of `report.md`, and the files behind it: per strategy
/// the top allocation sites at the peak, a flame graph, folded stacks and a pprof profile; the sites that
/// account for the difference between the worst and the best strategy; leaked objects with the place they
/// were tracked from; sites that grow per `repeat` iteration.
enum AttributionSection {
    /// The profiles of `run`'s attributed cases, worst strategy first: those the memory limit killed in
    /// every case (in file order: they are unranked, and worse than any that finished), then the ranked
    /// ones from the worst, then any other.
    static func profiles(_ run: ScenarioRun) -> [(strategy: String, profile: AllocationProfile)] {
        let summary = ScenarioSummary(run)
        let killed = summary.failedStrategies.filter { strategy in
            run.cases.contains { $0.strategy == strategy && $0.status == .killedByMemoryLimit }
        }
        let order = killed + summary.ranked.reversed().map(\.strategy) + run.strategies
        let byStrategy = Dictionary(
            run.instrumentedCases.compactMap { result in result.measurements?.profile.map { (result.strategy, $0) } },
            uniquingKeysWith: { first, _ in first })
        var seen = Set<String>()
        return order.compactMap { strategy in
            guard seen.insert(strategy).inserted, let profile = byStrategy[strategy] else { return nil }
            return (strategy, profile)
        }
    }

    /// Relative paths of a strategy's files.
    static func flameGraphPath(_ run: ScenarioRun, _ strategy: String) -> String {
        "charts/\(ReportBundle.chartStem(run.name))-\(ReportBundle.chartStem(strategy))-flame.svg"
    }
    static func stacksPath(_ run: ScenarioRun, _ strategy: String, extension suffix: String) -> String {
        "stacks/\(ReportBundle.chartStem(run.name))/\(ReportBundle.chartStem(strategy)).\(suffix)"
    }

    /// The flame graphs, folded stacks and pprof profiles of every attributed case of `report`.
    static func files(_ report: RunReport) -> [(path: String, data: Data)] {
        report.scenarios.flatMap { run in
            profiles(run).flatMap { strategy, profile -> [(path: String, data: Data)] in
                var files: [(path: String, data: Data)] = [
                    (stacksPath(run, strategy, extension: "folded"), Data(FoldedStacks.render(profile).utf8))
                ]
                let title = "\(run.name) / \(strategy): live memory at the peak, by allocation stack"
                if let svg = FlameGraph.render(profile, title: title) {
                    files.insert((flameGraphPath(run, strategy), Data(svg.utf8)), at: 0)
                }
                // gzip of a few KB of protobuf cannot fail but for memory: the profile is then left out.
                if let gzipped = try? PprofProfile.gzipped(profile, comment: "\(run.name) / \(strategy)") {
                    files.append((stacksPath(run, strategy, extension: "pb.gz"), Data(gzipped)))
                }
                return files
            }
        }
    }

    /// The section's Markdown; nothing when the scenario has no attributed case.
    static func lines(for run: ScenarioRun, files: Set<String>) -> [String] {
        let profiles = profiles(run)
        // A case that captured the heap only (`--heap-graph`, `expect:`) recorded no stacks by design.
        let failed = run.instrumentedCases.filter { $0.measurements?.profile == nil && $0.instrumentation == .stacks }
        guard !profiles.isEmpty || !failed.isEmpty else { return [] }
        var out = ["### Where the memory is", ""]
        let mean = profiles.first.map { Units.formatBytes($0.profile.sampleMeanBytes) } ?? "–"
        out.append(
            "Allocation stacks sampled about every \(mean) allocated, in one more case per strategy (its figures are "
                + "left out of the tables and checks above: recording stacks slows allocation). Bytes are live at that "
                + "case's peak, above its baseline.")
        out.append("")
        if profiles.count >= 2, let worst = profiles.first, let best = profiles.last {
            out.append("**Difference between strategies**")
            out.append("")
            out.append(
                AttributionMarkdown.difference(
                    worst.profile.difference(from: best.profile, label: worst.strategy, baseLabel: best.strategy),
                    limit: 5))
        }
        for (strategy, profile) in profiles {
            out.append(contentsOf: strategyLines(run, strategy, profile, files: files))
        }
        for result in failed {
            out.append(
                "\(MarkdownReport.code(result.strategy, inTable: false)): no stacks (\(MarkdownReport.cell(result.failure ?? "")))"
            )
            out.append("")
        }
        return out
    }

    static func strategyLines(
        _ run: ScenarioRun, _ strategy: String, _ profile: AllocationProfile, files: Set<String>
    ) -> [String] {
        var out = ["#### \(MarkdownReport.code(strategy, inTable: false))", ""]
        out.append(AttributionMarkdown.topSites(profile.siteTable(limit: 5), sampleMeanBytes: profile.sampleMeanBytes))
        let flame = flameGraphPath(run, strategy)
        if files.contains(flame) {
            out.append("![\(run.name) / \(strategy): live memory at the peak by allocation stack](\(flame))")
            out.append("")
        }
        let exports = [("folded stacks", "folded"), ("pprof", "pb.gz")].compactMap { label, suffix -> String? in
            let path = stacksPath(run, strategy, extension: suffix)
            return files.contains(path) ? "[\(label)](\(path))" : nil
        }
        if !exports.isEmpty {
            out.append("Stacks: " + exports.joined(separator: " · ") + " (flamegraph.pl, speedscope, `go tool pprof`).")
            out.append("")
        }
        if !profile.leakSites.isEmpty { out.append(contentsOf: leakLines(profile.leakSites)) }
        if !profile.iterations.isEmpty {
            out.append(AttributionMarkdown.growth(profile.siteGrowth(warmupIterations: warmup(run, strategy))))
        }
        if !profile.notes.isEmpty {
            out.append("Notes: " + profile.notes.map(MarkdownReport.cell).joined(separator: "; ") + ".")
            out.append("")
        }
        return out
    }

    /// Leaked objects and where they were tracked from (the `track` call right after their creation).
    static func leakLines(_ sites: [LeakSite]) -> [String] {
        var out = [
            "Leaked objects and where they were made:", "", "| Type | Count | Made at | Location |",
            "|---|---:|---|---|",
        ]
        for site in sites.prefix(10) {
            let place = site.site
            out.append(
                "| \(MarkdownReport.code(site.typeName)) | \(site.count) | "
                    + "\(place.map { MarkdownReport.code($0.function) } ?? "–") | "
                    + "\(MarkdownReport.cell(place?.shortLocation ?? "–")) |")
        }
        out.append("")
        return out
    }

    /// The warm-up of the scenario's `repeat` step, from its measured growth series (2 when unknown).
    static func warmup(_ run: ScenarioRun, _ strategy: String) -> Int {
        run.cases.first { $0.strategy == strategy }?.completed?.leaks?.growth.first?.warmupIterations ?? 2
    }
}
