import HarnessModel

/// A scenario's charts as figures of the document: memory over time (with each line's one peak marker), the
/// ranking figure by strategy, and the gauges over time. Everything they show is computed here.
enum ChartBuilder {
    /// The charts of `run` that have something to draw, each with its file under `charts/`.
    static func charts(_ run: ScenarioRun, scale: ValueScale?) -> [FigureBlock] {
        let stem = ReportBundle.chartStem(run.name)
        var blocks: [FigureBlock] = []
        if let timeline = timeline(run, scale: scale) {
            blocks.append(
                FigureBlock(
                    .timeline(timeline), file: "charts/\(stem)-timeline.svg", alt: "\(run.name): allocated over time"))
        }
        if let bars = peaks(run, scale: scale) {
            let title = ScenarioSummary(run).rankingTitle
            blocks.append(
                FigureBlock(.bars(bars), file: "charts/\(stem)-peaks.svg", alt: "\(run.name): \(title) by strategy"))
        }
        if let panels = gauges(run) {
            blocks.append(
                FigureBlock(.panels(panels), file: "charts/\(stem)-gauges.svg", alt: "\(run.name): gauges over time"))
        }
        return blocks
    }

    /// Allocated bytes above baseline over time of each strategy's representative case; nil without samples.
    /// `requested` nil picks log when the peaks differ by more than 30x.
    static func timeline(_ run: ScenarioRun, scale requested: ValueScale?) -> TimelineFigure? {
        let cases = run.strategies.compactMap { representativeCase(run, strategy: $0) }
        let lines = cases.compactMap { series(run, $0) }
        guard !lines.isEmpty else { return nil }
        let peaks = lines.map { Double($0.peak.netBytes) }.filter { $0 > 0 }
        let spread = (peaks.max() ?? 1) / max(peaks.min() ?? 1, 1)
        // Phase bands of the longest-running representative case (the script is the same for all).
        let reference = cases.max { $0.measurements.durationNanoseconds < $1.measurements.durationNanoseconds }
        return TimelineFigure(
            scenario: run.name, series: lines,
            phases: (reference?.measurements.phases ?? []).map {
                .init(name: $0.name, startNanoseconds: $0.startNanoseconds, endNanoseconds: $0.endNanoseconds)
            }, phasesOf: reference?.strategy, scale: requested ?? (spread > 30 ? .log : .linear))
    }

    /// One strategy's line: its samples above the baseline, its peak marker, its kill and memory warnings.
    static func series(_ run: ScenarioRun, _ representative: RepresentativeCase) -> TimelineFigure.Series? {
        let samples = representative.samples
        let baseline = representative.measurements.baselineAllocatedBytes
        let net = samples.allocatedBytes.map { $0 - baseline }
        guard let highest = net.indices.max(by: { net[$0] < net[$1] }) else { return nil }
        var warnings: [Int64] = []
        if let gauge = samples.gaugeNames.firstIndex(of: "memoryWarnings"), gauge < samples.gauges.count {
            let values = samples.gauges[gauge]
            for row in values.indices.dropFirst() where values[row] > values[row - 1] {
                warnings.append(samples.timeNanoseconds[row])
            }
        }
        let outcome = run.cases.first {
            $0.strategy == representative.strategy && $0.measurements == representative.measurements
        }?.outcome
        var kill: TimelineFigure.Kill?
        if case .killedByMemoryLimit(let hit, _) = outcome {
            kill = .init(
                timeNanoseconds: hit.timeNanoseconds, netBytes: hit.footprintBytes - baseline,
                limitNetBytes: hit.footprint == .allocated ? hit.limitBytes - baseline : nil,
                footprint: hit.footprint.rawValue)
        }
        // The marker stands where the line is highest and reads the case's measured peak: the figure of its row
        // (a peak read between two samples is higher than either).
        let peak = TimelineFigure.PeakMarker(
            sampleIndex: highest, timeNanoseconds: samples.timeNanoseconds[highest],
            netBytes: max(representative.measurements.peakAllocatedNetBytes, net[highest]))
        return TimelineFigure.Series(
            strategy: representative.strategy,
            colour: Palette.colour(run.strategies.firstIndex(of: representative.strategy) ?? 0),
            timeNanoseconds: samples.timeNanoseconds, netBytes: net, phaseNames: samples.phaseNames,
            phaseIndex: samples.phaseIndex, peak: peak, kill: kill, warningNanoseconds: warnings)
    }

    /// The scenario's ranking figure by strategy: the median bar, whiskers min–max, best first; strategies
    /// without a completed case last, saying why. Nil when no strategy completed.
    static func peaks(_ run: ScenarioRun, scale requested: ValueScale?) -> BarFigure? {
        let summary = ScenarioSummary(run)
        guard !summary.ranked.isEmpty else { return nil }
        let isBytes = summary.rankingIsBytes
        let positives = summary.ranked.compactMap(\.rankingMedian).filter { $0 > 0 }
        let spread = (positives.max() ?? 1) / max(positives.min() ?? 1, isBytes ? 1 : 0.001)
        let scale = requested ?? (spread > 30 ? .log : .linear)
        var rows = summary.ranked.enumerated().map { row, strategy -> BarFigure.Row in
            let median = strategy.rankingMedian ?? 0
            let ratio = summary.ratioToBest(strategy).map { " · " + Units.fixed($0, decimals: 1) + "x" } ?? ""
            let label =
                isBytes
                ? ValueAxis.compactBytes(Double(Int(median / 1024 * 10)) / 10 * 1024) : summary.formatRanking(median)
            return BarFigure.Row(
                name: strategy.strategy,
                colour: Palette.colour(run.strategies.firstIndex(of: strategy.strategy) ?? row),
                value: median, minimum: strategy.rankingMin, maximum: strategy.rankingMax, label: label + ratio)
        }
        // Strategies without a completed case (crashed, timed out, killed by the memory limit) get a row saying so.
        for strategy in summary.failedStrategies {
            let statuses = run.cases.filter { $0.strategy == strategy }.map(\.status.rawValue).uniqued()
            rows.append(
                BarFigure.Row(
                    name: strategy, colour: "#8a1c1c", value: nil, minimum: nil, maximum: nil, label: "",
                    note: "no completed case (\(statuses.joined(separator: ", ")))"))
        }
        return BarFigure(
            title: "\(run.name): \(summary.rankingTitle) by strategy",
            subtitle: "median of \(RepetitionsSection.count(run)), whiskers min–max · "
                + "\(scale == .log ? "log scale" : "linear scale")",
            axisTitle: summary.rankingAxisTitle,
            description: "Bar chart of the median \(summary.rankingTitle) per strategy of scenario \(run.name), lowest "
                + "first: "
                + summary.ranked.map { "\($0.strategy) \(summary.formatRanking($0.rankingMedian ?? 0))" }.joined(
                    separator: ", ") + ".",
            isBytes: isBytes, scale: scale, rows: rows)
    }

    /// The gauges of each strategy's representative case over time, a panel per gauge; nil without gauges.
    static func gauges(_ run: ScenarioRun) -> PanelsFigure? {
        let strategies = run.strategies.compactMap { strategy in
            representativeCase(run, strategy: strategy).map { (strategy, $0) }
        }
        let gaugeNames = strategies.flatMap { $0.1.samples.gaugeNames }.uniqued()
        guard !gaugeNames.isEmpty else { return nil }
        let colour = { (strategy: String) in Palette.colour(run.strategies.firstIndex(of: strategy) ?? 0) }
        let panels = gaugeNames.map { gauge -> PanelsFigure.Panel in
            var maximum = 1.0
            var lines: [PanelsFigure.Line] = []
            for (strategy, result) in strategies {
                let series = result.samples
                guard let index = series.gaugeNames.firstIndex(of: gauge) else { continue }
                let values = series.gauges[index].map(Double.init)
                maximum = max(maximum, values.max() ?? 0)
                lines.append(
                    .init(
                        name: strategy, colour: colour(strategy),
                        seconds: series.timeNanoseconds.map { Double($0) / 1e9 }, values: values))
            }
            return .init(name: gauge, isBytes: gauge.hasSuffix("Bytes"), lines: lines, maximum: maximum)
        }
        return PanelsFigure(
            title: "\(run.name): gauges over time",
            legendEntries: strategies.map { .init(name: $0.0, colour: colour($0.0)) }, panels: panels,
            maximumSeconds: strategies.compactMap { $0.1.samples.timeNanoseconds.last }.map { Double($0) / 1e9 }.max()
                ?? 1)
    }
}
