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
        let summaries = StrategyLeakSummary.summaries(scenario, criteria: criteria)
        guard summaries.contains(where: { $0.verdict != .notAssessed || $0.expectation != nil }) else { return [] }
        let anyHeapGraph = summaries.contains { $0.heap != nil }
        // A heading needs at least one '#' and Markdown has no level beyond six.
        let level = min(max(headingLevel, 1), 6)
        var out: [String] = []
        out.append(String(repeating: "#", count: level) + " Leaks")
        out.append("")
        let heapHeader = anyHeapGraph ? " Unreachable |" : ""
        out.append(
            "| Strategy | Expected | Surviving objects | Residue | Growth per iteration |\(heapHeader) Verdict |")
        out.append("|---|---|---|---:|---:|" + (anyHeapGraph ? "---:|" : "") + "---|")
        for summary in summaries {
            out.append(
                "| \(MarkdownReport.code(summary.strategy)) | \(summary.expectation?.rawValue ?? "–") | "
                    + "\(MarkdownReport.cell(survivors(summary))) | "
                    + "\(residue(summary)) | \(MarkdownReport.cell(growth(summary))) | "
                    + (anyHeapGraph ? "\(unreachable(summary)) | " : "") + "\(verdict(summary)) |")
        }
        out.append("")
        for summary in summaries where summary.verdict == .notAssessed && summary.expectation != nil {
            out.append(
                "**\(MarkdownReport.code(summary.strategy, inTable: false)) could not be assessed**: "
                    + "\(LeakWording.reasons(summary.judgement)).")
            out.append("")
        }
        let findings = summaries.filter { $0.outcome == .unexpectedLeak }
        for summary in findings {
            out.append(
                "**Unexpected leak in \(MarkdownReport.code(summary.strategy, inTable: false))**"
                    + (summary.assessedRepetitions == 0
                        ? "" : " (\(summary.leakingRepetitions) of \(summary.assessedRepetitions) repetitions)")
                    + ": "
                    + "\(LeakWording.reasons(summary.judgement)).")
            out.append("")
        }
        for summary in summaries where summary.outcome == .expectedLeakNotSeen {
            out.append(
                "\(MarkdownReport.code(summary.strategy, inTable: false)) is expected to leak but did not in any "
                    + "repetition: the scenario may no longer show the pitfall it demonstrates.")
            out.append("")
        }
        out.append(notes(criteria: criteria, anyHeapGraph: anyHeapGraph))
        out.append("")
        return out
    }

    /// What the columns mean, under the table.
    static func notes(criteria: LeakCriteria, anyHeapGraph: Bool) -> String {
        "Surviving objects are tracked objects still alive after teardown and settle (a range when repetitions "
            + "differ). Residue is the live heap (`stats.allocated` without the freed blocks thread caches hold) "
            + "after teardown and settle minus the baseline, ± what the harness allocated meanwhile and how far "
            + "two back-to-back readings disagreed; it counts jemalloc size classes, so the bytes asked for may be up "
            + "to 20% less (more for blocks under 128 B). Growth is the least-squares slope of the live heap "
            + "after each `repeat` iteration past the warm-up, ± the half-width of its 95% confidence interval, "
            + "after one-off jumps (an iteration growing over \(Units.formatBytes(criteria.oneOffJumpBytes)) "
            + "more or less than the median iteration, such as a thread's first allocator cache) are replaced "
            + "by the median growth; a lower bound above "
            + "\(Units.formatBytes(criteria.minimumSlopeBytesPerIteration)) per iteration is a leak even when "
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
        let lines = lines(for: scenario, headingLevel: headingLevel, criteria: criteria)
        return lines.isEmpty ? nil : lines.joined(separator: "\n") + "\n"
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

    static func residue(_ summary: StrategyLeakSummary) -> String {
        "\(Units.formatBytes(summary.medianResidueBytes)) ± \(Units.formatBytes(summary.residueUncertaintyBytes))"
    }

    static func growth(_ summary: StrategyLeakSummary) -> String {
        guard !summary.growth.isEmpty else { return "– (no repeat step)" }
        return summary.growth.map { growth in
            var text =
                "\(Units.formatBytes(growth.medianSlopeBytesPerIteration)) ± "
                + "\(Units.formatBytes(growth.medianBoundBytesPerIteration))"
            if growth.oneOffJumps > 0 {
                text += " (\(growth.oneOffJumps) one-off jump\(growth.oneOffJumps == 1 ? "" : "s") left out)"
            }
            return summary.growth.count == 1 ? text : "\(MarkdownReport.code(growth.phase, inTable: false)) \(text)"
        }.joined(separator: ", ")
    }

    /// `20 blocks (1.27 MiB) no root reaches, in 20 cycles` from the heap graph; `–` without one.
    static func unreachable(_ summary: StrategyLeakSummary) -> String {
        summary.heap.map(LeakWording.unreachable) ?? "–"
    }

    static func verdict(_ summary: StrategyLeakSummary) -> String {
        let repetitions =
            summary.assessedRepetitions == 0
            ? "by the heap graph" : "\(summary.leakingRepetitions) of \(summary.assessedRepetitions) repetitions leaked"
        switch summary.outcome {
        case .asExpected: return "\(summary.verdict.rawValue), as expected (\(repetitions))"
        case .unexpectedLeak: return "**unexpected leak** (\(repetitions))"
        case .expectedLeakNotSeen: return "leak-free, but expected to leak (\(repetitions))"
        case .notAssessed: return summary.expectation == nil ? "not assessed" : "**not assessed**"
        }
    }

    /// `8` when every repetition agrees, `0–1` when they differ.
    static func span(_ range: TypeCountRange) -> String {
        range.minimum == range.maximum ? "\(range.maximum)" : "\(range.minimum)–\(range.maximum)"
    }
}
