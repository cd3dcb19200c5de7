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
            columns: [.init("Strategy"), .init("Allocator"), .init("Point")]
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
                    .value(.bytes(Self.median(breakdowns, part)))
                }
                let rest = Statistics.median(breakdowns.map(\.unexplainedFraction)) ?? 0
                let allocator: Phrase = .code((breakdowns[0].allocator ?? .jemalloc).rawValue)
                let labels: [Phrase] = [.code(strategy), allocator, point == .peak ? "peak" : "end"]
                table.rows.append(
                    labels
                        + [
                            median(\.measuredBytes), median(\.liveHeapBytes), median(\.allocatorFreeBytes),
                            median(\.purgeableBytes), median(\.allocatorMetadataBytes), median(\.stacksBytes),
                            median(\.mappedFilesBytes), median(\.otherAnonymousBytes),
                        ] + [unexplainedCell(breakdowns, rest: rest)])
            }
        }
        return Section(
            level: 3, heading: "Resident memory explained (median)", blocks: [.paragraph(note), .table(table)])
    }

    /// The median of one part over `breakdowns`, bytes (0 for none).
    static func median(_ breakdowns: [ResidentBreakdown], _ part: (ResidentBreakdown) -> Int) -> Double {
        Statistics.median(breakdowns.map { Double(part($0)) }) ?? 0
    }

    /// The median rest and its share; and how far the set moved while its parts were read, when it did.
    static func unexplainedCell(_ breakdowns: [ResidentBreakdown], rest: Double) -> Phrase {
        let moved = median(breakdowns, \.movedWhileReadBytes)
        return .value(.bytes(median(breakdowns, \.unexplainedBytes))) + " (" + .value(.signedPercent(rest, decimals: 1))
            + (moved == 0 ? "" : "; moved " + .value(.signedBytes(moved)) + " while read") + ")"
    }

    static let note: Phrase =
        "Live heap is jemalloc's allocated bytes; allocator free its active pages beyond them, its dirty and its muzzy "
        + "pages (a purge would give the last two back); allocator metadata the pages of jemalloc's own mappings the "
        + "kernel holds resident beyond those. Stacks, code and files and other anonymous mappings come from "
        + "/proc/PID/smaps. Unexplained is the resident set (statm, read right after the parts) less their sum; when "
        + "the set moved while the parts were read, a sum between the readings before and after leaves nothing "
        + "unexplained, and the rest is its distance from the nearer one. The "
        + "peak is the highest resident set explained while the program ran: a new high at least 3% above the one "
        + "explained before it (read again once settled when it moved while its parts were read; of equal ones the "
        + "first read while it held still). A negative metadata figure means jemalloc counts "
        + "active or free pages the kernel never faulted in. On glibc's malloc (\(code: "--allocator glibc")) live "
        + "heap is mallinfo2's bytes in use (chunk headers included); allocator free the free bytes its arenas hold "
        + "(fordblks, the top chunk included); purge would free what malloc_trim gives back at least (keepcost, the "
        + "releasable top; trimming also returns whole free pages inside the arenas); allocator metadata the resident "
        + "pages of its heaps ([heap] and the other arenas' heaps) and of its own-mapped chunks (counted whole) beyond "
        + "those two, negative when free memory it holds was never faulted in."
}
