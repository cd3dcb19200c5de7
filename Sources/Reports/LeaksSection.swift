import HarnessModel
import Verdicts

/// The Leaks section of a scenario in `report.md`: per strategy, the tracked objects that survived
/// teardown, the residue, the growth per `repeat` iteration and the verdict against the file's
/// expectation. Deterministic: same input, same text.
public enum LeaksSection {
    /// The section's lines (heading, table, findings, notes); empty when no case of `scenario`
    /// gathered leak evidence (nothing tracked and no `repeat` step).
    /// - Parameter headingLevel: the number of `#` of the section heading (3 under a `##` scenario).
    public static func lines(
        for scenario: ScenarioRun, headingLevel: Int = 3,
        criteria: LeakCriteria = .standard
    ) -> [String] {
        markdown(for: scenario, headingLevel: headingLevel, criteria: criteria).map { text in
            text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) + [""]
        } ?? []
    }

    /// The Leaks section of the document; nil when no case of `scenario` gathered leak evidence.
    static func section(
        for scenario: ScenarioRun, headingLevel: Int = 3, criteria: LeakCriteria = .standard
    ) -> Section? {
        let summaries = StrategyLeakSummary.summaries(scenario, criteria: criteria)
        guard summaries.contains(where: { $0.verdict != .notAssessed || $0.expectation != nil }) else { return nil }
        let anyHeapGraph = summaries.contains { $0.heap != nil }
        var table = Table(
            columns: [
                .init("Strategy"), .init("Expected"), .init("Surviving objects"), .init("Residue", .number),
                .init("Growth per iteration", .number),
            ] + (anyHeapGraph ? [.init("Unreachable", .number)] : []) + [.init("Verdict")])
        for summary in summaries {
            table.rows.append(
                [
                    .code(summary.strategy), Phrase(stringLiteral: summary.expectation?.rawValue ?? "–"),
                    Phrase(stringLiteral: survivors(summary)), residue(summary), growth(summary),
                ] + (anyHeapGraph ? [Phrase(stringLiteral: unreachable(summary))] : []) + [verdict(summary)])
        }
        var blocks: [Block] = [.table(table)]
        for summary in summaries where summary.verdict == .notAssessed && summary.expectation != nil {
            blocks.append(
                .paragraph(
                    "\(strong: "\(code: summary.strategy) could not be assessed"): "
                        + "\(LeakWording.reasons(summary.judgement))."))
        }
        for summary in summaries where summary.outcome == .unexpectedLeak {
            let repetitions: Phrase =
                summary.assessedRepetitions == 0
                ? "" : " (\(summary.leakingRepetitions) of \(summary.assessedRepetitions) repetitions)"
            blocks.append(
                .paragraph(
                    "\(strong: "Unexpected leak in \(code: summary.strategy)")\(repetitions): "
                        + "\(LeakWording.reasons(summary.judgement))."))
        }
        for summary in summaries where summary.outcome == .expectedLeakNotSeen {
            blocks.append(
                .paragraph(
                    "\(code: summary.strategy) is expected to leak but did not in any "
                        + "repetition: the scenario may no longer show the pitfall it demonstrates."))
        }
        blocks.append(.paragraph(notes(criteria: criteria, anyHeapGraph: anyHeapGraph)))
        return Section(level: headingLevel, heading: "Leaks", blocks: blocks)
    }

    /// What the columns mean, under the table.
    static func notes(criteria: LeakCriteria, anyHeapGraph: Bool) -> Phrase {
        "Surviving objects are tracked objects still alive after teardown and settle (a range when repetitions "
            + "differ). Residue is the live heap (\(code: "stats.allocated") without the freed blocks thread caches hold) "
            + "after teardown and settle minus the baseline, ± what the harness allocated meanwhile and how far "
            + "two back-to-back readings disagreed; it counts jemalloc size classes, so the bytes asked for may be up "
            + "to 20% less (more for blocks under 128 B). Growth is the least-squares slope of the live heap "
            + "after each \(code: "repeat") iteration past the warm-up, ± the half-width of its 95% confidence interval, "
            + "after one-off jumps (an iteration growing over \(Value.bytes(Double(criteria.oneOffJumpBytes))) "
            + "more or less than the median iteration, such as a thread's first allocator cache) are replaced "
            + "by the median growth; a lower bound above "
            + "\(Value.bytes(Double(criteria.minimumSlopeBytesPerIteration))) per iteration is a leak even when "
            + "no tracked object survives."
            + (anyHeapGraph
                ? " Unreachable: the blocks of the heap graph's last capture (after teardown, a program's at "
                    + "exit) that no global, stack, register or thread-local word reaches, and the cycles among "
                    + "them, less those no root reached before the case's work (a capture at its baseline; a "
                    + "program starts with none); any such block is a leak, tracked or not (see Why memory is kept)."
                : "")
    }

    /// The section as one Markdown string; nil when there is nothing to report.
    public static func markdown(
        for scenario: ScenarioRun, headingLevel: Int = 3,
        criteria: LeakCriteria = .standard
    ) -> String? {
        section(for: scenario, headingLevel: headingLevel, criteria: criteria).map {
            MarkdownRenderer.render([.section($0)])
        }
    }

    static func survivors(_ summary: StrategyLeakSummary) -> String {
        guard !summary.tracked.isEmpty else { return "– (nothing tracked)" }
        return summary.tracked.map { tracked in
            let alive =
                summary.survivors.first { $0.typeName == tracked.typeName }
                ?? TypeCountRange(typeName: tracked.typeName, minimum: 0, maximum: 0)
            return "\(span(alive)) of \(span(tracked)) \(tracked.typeName)"
        }.joined(separator: ", ")
    }

    static func residue(_ summary: StrategyLeakSummary) -> Phrase {
        "\(Value.bytes(Double(summary.medianResidueBytes))) ± \(Value.bytes(Double(summary.residueUncertaintyBytes)))"
    }

    static func growth(_ summary: StrategyLeakSummary) -> Phrase {
        guard !summary.growth.isEmpty else { return "– (no repeat step)" }
        return Phrase.joined(
            summary.growth.map { growth in
                var text: Phrase =
                    "\(Value.bytes(growth.medianSlopeBytesPerIteration)) ± "
                    + "\(Value.bytes(growth.medianBoundBytesPerIteration))"
                if growth.oneOffJumps > 0 {
                    text.append(" (\(growth.oneOffJumps) one-off jump\(growth.oneOffJumps == 1 ? "" : "s") left out)")
                }
                return summary.growth.count == 1 ? text : "\(code: growth.phase) \(text)"
            }, separator: ", ")
    }

    /// `20 blocks (1.27 MiB) no root reaches, in 20 cycles` from the heap graph; `–` without one.
    static func unreachable(_ summary: StrategyLeakSummary) -> String {
        summary.heap.map(LeakWording.unreachable) ?? "–"
    }

    static func verdict(_ summary: StrategyLeakSummary) -> Phrase {
        let repetitions =
            summary.assessedRepetitions == 0
            ? "by the heap graph" : "\(summary.leakingRepetitions) of \(summary.assessedRepetitions) repetitions leaked"
        switch summary.outcome {
        case .asExpected: return "\(summary.verdict.rawValue), as expected (\(repetitions))"
        case .unexpectedLeak: return "\(strong: "unexpected leak") (\(repetitions))"
        case .expectedLeakNotSeen: return "leak-free, but expected to leak (\(repetitions))"
        case .notAssessed: return summary.expectation == nil ? "not assessed" : "\(strong: "not assessed")"
        }
    }

    /// `8` when every repetition agrees, `0–1` when they differ.
    static func span(_ range: TypeCountRange) -> String {
        range.minimum == range.maximum ? "\(range.maximum)" : "\(range.minimum)–\(range.maximum)"
    }
}
