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

    /// The scenario's live sets as one tree: each attributed strategy's peak (worst first), then `earlier`'s
    /// (a comparison page's earlier run, labelled `earlierLabel`), then every iteration mark of each strategy.
    static func tree(_ run: ScenarioRun, earlier: ScenarioRun? = nil, earlierLabel: String? = nil) -> FlameTree? {
        let profiles = profiles(run)
        let before = earlier.map(Self.profiles) ?? []
        guard !profiles.isEmpty || !before.isEmpty else { return nil }
        var columns: [FlameTree.Column] = []
        var stacks: [[FlameTree.Stack]] = []
        func add(_ strategy: String, _ profile: AllocationProfile, earlier: String?) {
            columns.append(
                FlameTree.Column(
                    strategy: strategy, earlierRun: earlier, measuredPeakNetBytes: profile.peakNetBytes,
                    sampleMeanBytes: profile.sampleMeanBytes))
            stacks.append(
                profile.stacks.map { flameStack(profile, $0, bytes: $0.peakLiveBytes, count: $0.peakLiveCount) })
        }
        for (strategy, profile) in profiles { add(strategy, profile, earlier: nil) }
        for (strategy, profile) in before { add(strategy, profile, earlier: earlierLabel ?? "earlier run") }
        for (strategy, profile) in profiles {
            for mark in profile.iterations {
                columns.append(
                    FlameTree.Column(
                        strategy: strategy,
                        mark: .init(label: "\(mark.phase) #\(mark.iteration)", timeNanoseconds: mark.timeNanoseconds),
                        sampleMeanBytes: profile.sampleMeanBytes))
                stacks.append(
                    mark.live.compactMap { live in
                        profile.stacks.indices.contains(live.stack)
                            ? flameStack(
                                profile, profile.stacks[live.stack], bytes: live.liveBytes, count: live.liveCount)
                            : nil
                    })
            }
        }
        return FlameTree.build(columns: columns, stacks: stacks)
    }

    /// The tree of one profile's live set at its peak (one column).
    static func peakTree(_ profile: AllocationProfile, strategy: String = "") -> FlameTree {
        FlameTree.build(
            columns: [
                FlameTree.Column(
                    strategy: strategy, measuredPeakNetBytes: profile.peakNetBytes,
                    sampleMeanBytes: profile.sampleMeanBytes)
            ],
            stacks: [profile.stacks.map { flameStack(profile, $0, bytes: $0.peakLiveBytes, count: $0.peakLiveCount) }])
    }

    /// A column of `tree` as a flame graph, described by `profile`'s largest allocation sites.
    static func flameFigure(title: String, tree: FlameTree, column: Int, profile: AllocationProfile) -> FlameFigure {
        let sites = profile.siteTable(limit: 5).rows.map {
            "\($0.site.function) (\($0.site.shortLocation)) \(Units.formatBytes($0.liveBytes)), "
                + "\(Units.fixed($0.shareOfPeak * 100, decimals: 1))%"
        }
        let description =
            "Flame graph of the memory live at the peak above the baseline, "
            + "\(Units.formatBytes(tree.bytes[column][0])) sampled, by allocation stack: each box is a function, as "
            + "wide as the bytes allocated by it and the functions it called. Largest allocation sites: "
            + sites.joined(separator: "; ") + "."
        return FlameFigure(title: title, description: description, tree: tree, column: column)
    }

    private static func flameStack(
        _ profile: AllocationProfile, _ stack: AllocationStack, bytes: Int, count: Int
    ) -> FlameTree.Stack {
        FlameTree.Stack(
            frames: profile.frames(of: stack).map {
                FlameTree.Frame(
                    function: $0.function, location: $0.shortLocation, moduleName: $0.moduleName,
                    isLibrary: $0.isLibrary)
            }, bytes: bytes, count: count)
    }

    /// The folded stacks and pprof profiles of every attributed case of `report` (the flame graphs are figures of
    /// the document).
    static func files(_ report: RunReport) -> [(path: String, data: Data)] {
        report.scenarios.flatMap { run in
            profiles(run).flatMap { strategy, profile -> [(path: String, data: Data)] in
                var files: [(path: String, data: Data)] = [
                    (stacksPath(run, strategy, extension: "folded"), Data(FoldedStacks.render(profile).utf8))
                ]
                // gzip of a few KB of protobuf cannot fail but for memory: the profile is then left out.
                if let gzipped = try? PprofProfile.gzipped(profile, comment: "\(run.name) / \(strategy)") {
                    files.append((stacksPath(run, strategy, extension: "pb.gz"), Data(gzipped)))
                }
                return files
            }
        }
    }

    /// The section; nil when the scenario has no attributed case. `files`: the files to link (nil: all).
    static func section(for run: ScenarioRun, files: Set<String>?) -> Section? {
        let profiles = profiles(run)
        // A case that captured the heap only (`--heap-graph`, `expect:`) recorded no stacks by design.
        let failed = run.instrumentedCases.filter { $0.measurements?.profile == nil && $0.instrumentation == .stacks }
        guard !profiles.isEmpty || !failed.isEmpty else { return nil }
        let mean: Phrase = profiles.first.map { .value(.bytes(Double($0.profile.sampleMeanBytes))) } ?? "–"
        var blocks: [Block] = [
            .paragraph(
                "Allocation stacks sampled about every \(mean) allocated, in one more case per strategy (its figures "
                    + "are left out of the tables and checks above: recording stacks slows allocation). Bytes are live "
                    + "at that case's peak, above its baseline.")
        ]
        if profiles.count >= 2, let worst = profiles.first, let best = profiles.last {
            blocks.append(.paragraph("\(strong: "Difference between strategies")"))
            blocks += AttributionMarkdown.differenceBlocks(
                worst.profile.difference(from: best.profile, label: worst.strategy, baseLabel: best.strategy),
                limit: 5)
        }
        let tree = tree(run)
        for (column, (strategy, profile)) in profiles.enumerated() {
            blocks.append(.section(strategySection(run, strategy, profile, tree: tree, column: column, files: files)))
        }
        for result in failed {
            blocks.append(.paragraph("\(code: result.strategy): no stacks (\(result.failureText ?? ""))"))
        }
        return Section(level: 3, heading: "Where the memory is", blocks: blocks)
    }

    static func strategySection(
        _ run: ScenarioRun, _ strategy: String, _ profile: AllocationProfile, tree: FlameTree?, column: Int,
        files: Set<String>?
    ) -> Section {
        var blocks = AttributionMarkdown.topSitesBlocks(
            profile.siteTable(limit: 5), sampleMeanBytes: profile.sampleMeanBytes)
        let flame = flameGraphPath(run, strategy)
        if let tree, tree.bytes[column][0] > 0, files?.contains(flame) ?? true {
            let title = "\(run.name) / \(strategy): live memory at the peak, by allocation stack"
            blocks.append(
                .figure(
                    FigureBlock(
                        .flame(flameFigure(title: title, tree: tree, column: column, profile: profile)), file: flame,
                        alt: "\(run.name) / \(strategy): live memory at the peak by allocation stack")))
        }
        let exports = [("folded stacks", "folded"), ("pprof", "pb.gz")].compactMap { label, suffix -> Phrase? in
            let path = stacksPath(run, strategy, extension: suffix)
            return files?.contains(path) ?? true ? Phrase([.link(Phrase(stringLiteral: label), .file(path))]) : nil
        }
        if !exports.isEmpty {
            blocks.append(
                .paragraph(
                    "Stacks: " + Phrase.joined(exports, separator: " · ")
                        + " (flamegraph.pl, speedscope, \(code: "go tool pprof"))."))
        }
        if !profile.leakSites.isEmpty { blocks += leakBlocks(profile.leakSites) }
        if !profile.iterations.isEmpty {
            blocks += AttributionMarkdown.growthBlocks(profile.siteGrowth(warmupIterations: warmup(run, strategy)))
        }
        if !profile.notes.isEmpty {
            blocks.append(.paragraph("Notes: \(profile.notes.joined(separator: "; "))."))
        }
        return Section(level: 4, heading: .code(strategy), blocks: blocks)
    }

    /// Leaked objects and where they were tracked from (the `track` call right after their creation).
    static func leakBlocks(_ sites: [LeakSite]) -> [Block] {
        let rows = sites.prefix(10).map { site -> [Phrase] in
            [
                .code(site.typeName), .value(.count(site.count)), site.site.map { .code($0.function) } ?? "–",
                Phrase(stringLiteral: site.site?.shortLocation ?? "–"),
            ]
        }
        return [
            .paragraph("Leaked objects and where they were made:"),
            .table(
                Table(
                    columns: [.init("Type"), .init("Count", .number), .init("Made at"), .init("Location")], rows: rows)),
        ]
    }

    /// The warm-up of the scenario's `repeat` step, from its measured growth series (2 when unknown).
    static func warmup(_ run: ScenarioRun, _ strategy: String) -> Int {
        run.cases.first { $0.strategy == strategy }?.completed?.leaks?.growth.first?.warmupIterations ?? 2
    }
}
