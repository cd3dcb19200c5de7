import HarnessModel

/// How a reading spells the names it quotes (strategies, phases, metrics): as Markdown code spans for
/// `report.md`, the run index and GitHub's step summary, or bare for the terminal.
public enum ReadingStyle: Sendable, Hashable {
    /// Names in code spans: `` `signal-next` ``.
    case markdown
    /// Names bare: `signal-next`.
    case plain

    /// `name` as this style quotes it.
    func code(_ name: String) -> String {
        switch self {
        case .markdown: return "`\(name)`"
        case .plain: return name
        }
    }

    /// A figure's label in this style: `Figure.label`, with the phase or metric name it holds quoted as `code`.
    func label(_ figure: Figure) -> String {
        switch figure {
        case .phasePeakAllocated(let phase): return "peak allocated in \(code(phase))"
        case .metric(let name): return code(name)
        default: return figure.label
        }
    }
}

// The scenario in plain language: the sentences `report.md`, the terminal and the run index print under a
// scenario's ranking, and the titles its charts give the ranking figure. The model holds the figures; the
// wording is the renderer's.
extension ScenarioSummary {
    /// The scenario in plain language, in Markdown: the strategies the memory limit stopped first (a kill is
    /// the strongest finding a budget gives, and a killed strategy has no peak to rank), then the comparison
    /// of the strategies that completed, then the spike the sampler missed, if any.
    public var reading: String { reading(.markdown) }

    /// The reading in `style`: Markdown, or plain text for the terminal.
    public func reading(_ style: ReadingStyle) -> String {
        let spikes = missedSpike.map {
            " The sampler missed the peak of \(style.code($0.strategy.strategy)): "
                + "\(Units.formatBytes($0.strategy.medianPeakAllocatedNetBytes)) "
                + "sampled, \(Units.formatBytes($0.exactBytes)) counted at every allocation."
        }
        return readingWithoutSpikes(style) + (spikes ?? "")
    }

    /// The fastest and slowest growth in the rate phase, in Markdown, when the fastest grows: a peak that
    /// grows with the phase's length depends on how long the scenario runs; the rate does not.
    public var rateReading: String? {
        guard let ratePhase, let fastest = growth.max(by: { $0.bytesPerSecond < $1.bytesPerSecond }),
            let slowest = growth.min(by: { $0.bytesPerSecond < $1.bytesPerSecond }), fastest.bytesPerSecond > 0
        else { return nil }
        let others =
            slowest.strategy == fastest.strategy ? "" : " (`\(slowest.strategy)`: \(slowest.formatted))"
        return "While `\(ratePhase)` runs, `\(fastest.strategy)` grows \(fastest.formatted)\(others), "
            + "a rate that does not depend on how long `\(ratePhase)` lasts, as a peak does."
    }

    /// A value of the ranking figure in words: `144.06 MiB`.
    func formatRanking(_ value: Double) -> String { ranking.format(value, unit: rankingUnit) }

    /// The ranking figure as the report's tables and readings name it.
    var rankingLabel: String { ranking.label }

    /// The ranking figure in a chart's title: `peak allocated`, `finalDatabaseBytes`.
    public var rankingTitle: String { ReadingStyle.plain.label(ranking) }

    /// What a chart's value axis measures: `allocated above baseline`, `finalDatabaseBytes (bytes)`.
    public var rankingAxisTitle: String {
        switch ranking {
        case .peakAllocated: return "allocated above baseline"
        case .exactPeak: return "live bytes above baseline, counted at every allocation"
        default: return rankingTitle
        }
    }

    private func readingWithoutSpikes(_ style: ReadingStyle) -> String {
        guard !kills.isEmpty else { return comparison(style) }
        let each = kills.map {
            "\(style.code($0.strategy)) (\($0.killedCount)/\($0.caseCount) cases, at "
                + "\(Units.fixed($0.medianKilledAtMilliseconds / 1000, decimals: 2)) s, "
                + "\(Units.formatBytes($0.medianFootprintBytes)))"
        }
        let list = each.count == 1 ? each[0] : each.dropLast().joined(separator: ", ") + " and " + each[each.count - 1]
        let killed = "Killed by the memory limit: \(list)."
        return ranked.isEmpty ? killed : killed + " Among the strategies that completed: " + comparison(style)
    }

    /// One sentence comparing the worst and best strategies that completed by the ranking figure.
    private func comparison(_ style: ReadingStyle) -> String {
        guard let best = ranked.first, let worst = ranked.last else {
            return "No strategy completed, so there is nothing to compare."
        }
        let label = style.label(ranking)
        guard let bestValue = best.rankingMedian else { return "No completed case has a value for \(label)." }
        let worstValue = worst.rankingMedian ?? bestValue
        let (bestName, worstName) = (style.code(best.strategy), style.code(worst.strategy))
        let peak = ranking.isPeak
        // Net figures read "above baseline"; absolute ones (resident, RSS) and metrics stand alone.
        let net = ranking == .peakAllocated || ranking == .exactPeak ? " above baseline" : ""
        if ranked.count == 1 {
            return peak
                ? "\(bestName) peaks at \(formatRanking(bestValue))\(net)."
                : "\(bestName): \(label) \(formatRanking(bestValue))."
        }
        guard let ratio = ratioToBest(worst) else {
            if peak && bestValue == 0 {
                return "\(bestName) allocated nothing\(net); \(worstName) peaks at \(formatRanking(worstValue))."
            }
            // No ratio to a best of zero: say how many strategies have none instead.
            let zero = ranked.filter { $0.rankingMedian == 0 }.count
            return bestValue == 0 && worstValue > 0
                ? "\(worstName) has the most \(label) (\(formatRanking(worstValue))); "
                    + (zero == 1 ? "\(bestName) has none." : "\(zero) strategies have none.")
                : "\(bestName) has \(label) \(formatRanking(bestValue)); \(worstName) \(formatRanking(worstValue))."
        }
        if ratio < 1.05 {
            let all = ranked.count == 2 ? "Both strategies" : "All \(ranked.count) strategies"
            let (low, high) = (formatRanking(bestValue), formatRanking(worstValue))
            let range = low == high ? low : "\(low) to \(high)"
            return peak
                ? "\(all) peak within 5% of each other (\(range)\(net))."
                : "\(all) are within 5% of each other on \(label) (\(range))."
        }
        let times = Units.fixed(ratio, decimals: 1)
        return peak
            ? "\(worstName) peaks \(times)x higher than \(bestName) "
                + "(\(formatRanking(worstValue)) vs \(formatRanking(bestValue))\(net))."
            : "\(worstName) has \(times)x the \(label) of \(bestName) "
                + "(\(formatRanking(worstValue)) vs \(formatRanking(bestValue)))."
    }
}

extension StrategyGrowth {
    /// The growth in words: `312.4 MiB/s`.
    var formatted: String { Units.formatBytes(bytesPerSecond) + "/s" }
}
