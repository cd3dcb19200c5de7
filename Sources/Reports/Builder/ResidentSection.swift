import HarnessModel

/// What a program's resident set is made of, per strategy at its highest explained point and at its exit: the median
/// of each part over the cases that completed. Each part is measured; the unexplained rest is the resident set less
/// their sum.
enum ResidentSection {
    /// The section; nil when no completed case has its resident set explained.
    static func section(for scenario: ScenarioRun) -> Section? {
        let completed = scenario.cases.filter { $0.status == .ok }
        guard completed.contains(where: { $0.measurements?.program?.residentExplained != nil }) else { return nil }
        var table = Table(
            columns: [.init("Strategy"), .init("Point")]
                + [
                    "RSS", "Live heap", "Allocator free", "Purge would free", "Allocator metadata", "Stacks",
                    "Code and files", "Other anonymous", "Unexplained",
                ].map { .init(Phrase(stringLiteral: $0), .number) })
        for strategy in scenario.strategies {
            let explained = completed.filter { $0.strategy == strategy }.compactMap {
                $0.measurements?.program?.residentExplained
            }.flatMap { $0 }
            for point in [ResidentBreakdown.Point.peak, .end] {
                let breakdowns = explained.filter { $0.point == point }
                guard !breakdowns.isEmpty else { continue }
                let median = { (part: (ResidentBreakdown) -> Int) -> Phrase in
                    .value(.bytes(Statistics.median(breakdowns.map { Double(part($0)) }) ?? 0))
                }
                let rest = Statistics.median(breakdowns.map(\.unexplainedFraction)) ?? 0
                table.rows.append(
                    [.code(strategy), point == .peak ? "peak" : "end"]
                        + [
                            median(\.measuredBytes), median(\.liveHeapBytes), median(\.allocatorFreeBytes),
                            median(\.purgeableBytes), median(\.allocatorMetadataBytes), median(\.stacksBytes),
                            median(\.mappedFilesBytes), median(\.otherAnonymousBytes),
                        ] + [median(\.unexplainedBytes) + " (" + .value(.signedPercent(rest, decimals: 1)) + ")"])
            }
        }
        return Section(
            level: 3, heading: "Resident memory explained (median)", blocks: [.paragraph(note), .table(table)])
    }

    static let note: Phrase =
        "Live heap is jemalloc's allocated bytes; allocator free its active pages beyond them, its dirty and its muzzy "
        + "pages (a purge would give the last two back); allocator metadata the pages of jemalloc's own mappings the "
        + "kernel holds resident beyond those. Stacks, code and files and other anonymous mappings come from "
        + "/proc/PID/smaps. Unexplained is the resident set (statm, read right after the parts) less their sum. The "
        + "peak is the highest resident set explained while the program ran: a new high at least 3% above the one "
        + "explained before it (read again once settled when it moved while its parts were read; of equal ones the "
        + "first read while it held still). A negative metadata figure means jemalloc counts "
        + "active or free pages the kernel never faulted in."
}
