import HarnessModel

/// "What held the peak" in a scenario's section (report.md and report.html alike): per strategy whose instrumented
/// case captured its heap at its peak (`--heap-graph`), the largest retainers of that capture by retained bytes, each
/// a chain of the dominator tree aggregated by its path of types and fields. Deterministic.
enum PeakRetainersSection {
    /// The section; nil when no strategy of `run` has a capture at its peak.
    static func section(for run: ScenarioRun, headingLevel: Int = 3) -> Section? {
        let peaks = HeapGraphFiles.graphs(run).compactMap { entry in entry.graph.peak.map { (entry.strategy, $0) } }
        guard !peaks.isEmpty else { return nil }
        // A heading needs at least one '#' and Markdown has no level beyond six.
        let level = min(max(headingLevel, 1), 6)
        let blocks: [Block] =
            [
                .paragraph(
                    "The heap captured at each strategy's peak (at its first release after a new high, at most 10% "
                        + "below the highest live bytes; in the \(code: "--heap-graph") case). A row is a chain of the "
                        + "dominator tree: blocks of one path of types and fields, and what its first node retains (its "
                        + "bytes and those of every block only it keeps alive, as Eclipse MAT and Chrome DevTools "
                        + "count them).")
            ]
            + peaks.map { strategy, peak in .section(strategySection(strategy, peak, level: min(level + 1, 6))) }
        return Section(level: level, heading: "What held the peak", blocks: blocks)
    }

    static func strategySection(_ strategy: String, _ peak: HeapPeakCapture, level: Int) -> Section {
        let capture = peak.capture
        var blocks: [Block] = [
            .paragraph(
                "Captured at \(Value.bytes(Double(peak.capturedLiveBytes))) live (the peak: "
                    + "\(Value.bytes(Double(peak.peakLiveBytes)))): \(capture.liveBlocks) live blocks, "
                    + "\(Value.bytes(Double(capture.reachableBytes))) reachable. Cost: \(peak.captureCount) capture"
                    + "\(peak.captureCount == 1 ? "" : "s") at successive highs, "
                    + "\(Value.duration(nanoseconds: peak.captureNanoseconds)) with the case's threads stopped; the "
                    + "last one read, named and analysed in \(Value.duration(nanoseconds: peak.analysisNanoseconds)) "
                    + "after the case.")
        ]
        if let retainers = capture.retainers, !retainers.rows.isEmpty {
            blocks.append(.table(table(retainers)))
        } else {
            blocks.append(.paragraph("No retainer holds 0.5% of the reachable bytes or more."))
        }
        return Section(level: level, heading: .code(strategy), blocks: blocks)
    }

    static func table(_ retainers: HeapRetainers) -> Table {
        var table = Table(columns: [
            .init("Retainer"), .init("Blocks", .number), .init("Retained", .number), .init("Share", .number),
            .init("Held by"), .init("Allocated at"),
        ])
        for row in retainers.rows {
            let share: Phrase =
                retainers.reachableBytes > 0
                ? .value(.percent(Double(row.retainedBytes) / Double(retainers.reachableBytes), decimals: 1)) : "–"
            let site: Phrase = row.allocationStack?.first.map { .code($0) } ?? "–"
            // No root points at the chain's first blocks: only the virtual root dominates them, several owners hold
            // them.
            let root: Phrase = row.root.map { .code($0.description) } ?? "several owners"
            table.rows.append([
                chain(row), .value(.count(row.count)), .value(.bytes(Double(row.retainedBytes))), share, root, site,
            ])
        }
        if retainers.omittedRows > 0 {
            table.rows.append(["\(retainers.omittedRows) smaller chains", "–", "–", "–", "–", "–"])
        }
        return table
    }

    /// `LiveQuery` .pending → closure context ×3000 → `Document` ×3000, the nodes the row retains in bold.
    static func chain(_ row: HeapRetainer) -> Phrase {
        var parts: [Phrase] = []
        for (index, node) in row.nodes.enumerated() {
            var text = HeapGraphSection.typeCell(node.type) + (node.count > 1 ? " ×\(node.count)" : "")
            if let field = node.fieldName { text = ".\(field) " + text }
            if index == row.firstRetainingNode && index > 0 { text = "\(strong: text)" }
            if row.omittedNodes > 0 && index == (row.nodes.count + 1) / 2 { parts.append("… \(row.omittedNodes) more") }
            parts.append(text)
        }
        return Phrase.joined(parts, separator: " → ")
    }
}
