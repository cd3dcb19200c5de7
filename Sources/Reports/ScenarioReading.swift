import HarnessModel

/// How a reading spells the names it quotes (strategies, phases, metrics): as Markdown code spans for
/// `report.md`, the run index and GitHub's step summary, or bare for the terminal.
public enum ReadingStyle: Sendable, Hashable {
    /// Names in code spans: `` `signal-next` ``.
    case markdown
    /// Names bare: `signal-next`.
    case plain

    /// `phrase` in this style.
    func render(_ phrase: Phrase) -> String {
        switch self {
        case .markdown: return MarkdownRenderer.inline(phrase)
        case .plain: return phrase.plainText
        }
    }
}

/// The words of the figures a threshold or a ranking names: `peak allocated`, `peak allocated in` `burst`, a
/// metric's name as code.
enum FigureWords {
    static func label(_ figure: Figure) -> Phrase {
        switch figure {
        case .phasePeakAllocated(let phase): return "peak allocated in \(code: phase)"
        case .metric(let name): return .code(name)
        default: return Phrase(stringLiteral: figure.label)
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
    public func reading(_ style: ReadingStyle) -> String { style.render(readingPhrase) }

    /// The reading as a phrase of the document.
    var readingPhrase: Phrase {
        let spikes = missedSpike.map {
            " The sampler missed the peak of \(code: $0.strategy.strategy): "
                + "\(Value.bytes($0.strategy.medianPeakAllocatedNetBytes)) "
                + "sampled, \(Value.bytes(Double($0.exactBytes))) counted at every allocation." as Phrase
        }
        return readingWithoutSpikes + (spikes ?? Phrase())
    }

    /// The fastest and slowest growth in the rate phase, in Markdown, when the fastest grows: a peak that
    /// grows with the phase's length depends on how long the scenario runs; the rate does not.
    public var rateReading: String? { rateReadingPhrase.map { MarkdownRenderer.inline($0) } }

    var rateReadingPhrase: Phrase? {
        guard let ratePhase, let fastest = growth.max(by: { $0.bytesPerSecond < $1.bytesPerSecond }),
            let slowest = growth.min(by: { $0.bytesPerSecond < $1.bytesPerSecond }), fastest.bytesPerSecond > 0
        else { return nil }
        let others: Phrase =
            slowest.strategy == fastest.strategy
            ? Phrase() : " (\(code: slowest.strategy): \(Value.bytesPerSecond(slowest.bytesPerSecond)))"
        return "While \(code: ratePhase) runs, \(code: fastest.strategy) grows "
            + "\(Value.bytesPerSecond(fastest.bytesPerSecond))\(others), "
            + "a rate that does not depend on how long \(code: ratePhase) lasts, as a peak does."
    }

    /// A value of the ranking figure in words: `144.06 MiB`.
    func formatRanking(_ value: Double) -> String { ranking.format(value, unit: rankingUnit) }

    /// A value of the ranking figure as a phrase.
    func rankingValue(_ value: Double) -> Phrase { Phrase(stringLiteral: formatRanking(value)) }

    /// The ranking figure as the report's tables and readings name it.
    var rankingLabel: String { ranking.label }

    /// The ranking figure in a chart's title: `peak allocated`, `finalDatabaseBytes`.
    public var rankingTitle: String { FigureWords.label(ranking).plainText }

    /// What a chart's value axis measures: `allocated above baseline`, `finalDatabaseBytes (bytes)`.
    public var rankingAxisTitle: String {
        switch ranking {
        case .peakAllocated: return "allocated above baseline"
        case .exactPeak: return "live bytes above baseline, counted at every allocation"
        default: return rankingTitle
        }
    }

    private var readingWithoutSpikes: Phrase {
        guard !kills.isEmpty else { return comparison }
        let each = kills.map {
            "\(code: $0.strategy) (\($0.killedCount)/\($0.caseCount) cases, at "
                + "\(Value.number($0.medianKilledAtMilliseconds / 1000, decimals: 2)) s, "
                + "\(Value.bytes($0.medianFootprintBytes)))" as Phrase
        }
        let list =
            each.count == 1
            ? each[0] : Phrase.joined(Array(each.dropLast()), separator: ", ") + " and " + each[each.count - 1]
        let killed: Phrase = "Killed by the memory limit: \(list)."
        return ranked.isEmpty ? killed : killed + " Among the strategies that completed: " + comparison
    }

    /// One sentence comparing the worst and best strategies that completed by the ranking figure.
    private var comparison: Phrase {
        guard let best = ranked.first, let worst = ranked.last else {
            return "No strategy completed, so there is nothing to compare."
        }
        let label = FigureWords.label(ranking)
        guard let bestValue = best.rankingMedian else { return "No completed case has a value for \(label)." }
        let worstValue = worst.rankingMedian ?? bestValue
        let (bestName, worstName) = (Phrase.code(best.strategy), Phrase.code(worst.strategy))
        let (bestText, worstText) = (rankingValue(bestValue), rankingValue(worstValue))
        let peak = ranking.isPeak
        // Net figures read "above baseline"; absolute ones (resident, RSS) and metrics stand alone.
        let net = ranking == .peakAllocated || ranking == .exactPeak ? " above baseline" : ""
        if ranked.count == 1 {
            return peak ? "\(bestName) peaks at \(bestText)\(net)." : "\(bestName): \(label) \(bestText)."
        }
        guard let ratio = ratioToBest(worst) else {
            if peak && bestValue == 0 {
                return "\(bestName) allocated nothing\(net); \(worstName) peaks at \(worstText)."
            }
            // No ratio to a best of zero: say how many strategies have none instead.
            let zero = ranked.filter { $0.rankingMedian == 0 }.count
            return bestValue == 0 && worstValue > 0
                ? "\(worstName) has the most \(label) (\(worstText)); "
                    + (zero == 1 ? "\(bestName) has none." : "\(zero) strategies have none.")
                : "\(bestName) has \(label) \(bestText); \(worstName) \(worstText)."
        }
        if ratio < 1.05 {
            let all = ranked.count == 2 ? "Both strategies" : "All \(ranked.count) strategies"
            let range: Phrase = bestText == worstText ? bestText : "\(bestText) to \(worstText)"
            return peak
                ? "\(all) peak within 5% of each other (\(range)\(net))."
                : "\(all) are within 5% of each other on \(label) (\(range))."
        }
        let times = Value.ratio(ratio, decimals: 1)
        return peak
            ? "\(worstName) peaks \(times) higher than \(bestName) (\(worstText) vs \(bestText)\(net))."
            : "\(worstName) has \(times) the \(label) of \(bestName) (\(worstText) vs \(bestText))."
    }
}
