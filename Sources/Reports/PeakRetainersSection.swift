import HarnessModel

/// "What held the peak" in a scenario's section of `report.md` (and so of `report.html`): per strategy whose
/// instrumented case captured its heap at its peak (`--heap-graph`), the largest retainers of that capture by retained
/// bytes, each a chain of the dominator tree aggregated by its path of types and fields. Deterministic.
enum PeakRetainersSection {
    /// The section's lines; empty when no strategy of `run` has a capture at its peak.
    static func lines(for run: ScenarioRun, headingLevel: Int = 3) -> [String] {
        let peaks = HeapGraphFiles.graphs(run).compactMap { entry in entry.graph.peak.map { (entry.strategy, $0) } }
        guard !peaks.isEmpty else { return [] }
        // A heading needs at least one '#' and Markdown has no level beyond six.
        let level = min(max(headingLevel, 1), 6)
        var out = [
            String(repeating: "#", count: level) + " What held the peak", "",
            "The heap captured at each strategy's peak (at its first release after a new high, at most 10% below the "
                + "highest live bytes; in the `--heap-graph` case). A row is a chain of the dominator tree: blocks "
                + "of one path of types and fields, and what its first node retains (its bytes and those of every "
                + "block only it keeps alive, as Eclipse MAT and Chrome DevTools count them).",
            "",
        ]
        for (strategy, peak) in peaks {
            out += strategyLines(strategy, peak, headingLevel: min(level + 1, 6))
        }
        return out
    }

    static func strategyLines(_ strategy: String, _ peak: HeapPeakCapture, headingLevel: Int) -> [String] {
        let capture = peak.capture
        var out = [
            String(repeating: "#", count: headingLevel) + " " + MarkdownReport.code(strategy, inTable: false), "",
            "Captured at \(Units.formatBytes(peak.capturedLiveBytes)) live (the peak: "
                + "\(Units.formatBytes(peak.peakLiveBytes))): \(capture.liveBlocks) live blocks, "
                + "\(Units.formatBytes(capture.reachableBytes)) reachable. Cost: \(peak.captureCount) capture"
                + "\(peak.captureCount == 1 ? "" : "s") at successive highs, \(Units.formatDuration(nanoseconds: peak.captureNanoseconds)) "
                + "with the case's threads stopped; the last one read, named and analysed in "
                + "\(Units.formatDuration(nanoseconds: peak.analysisNanoseconds)) after the case.",
            "",
        ]
        guard let retainers = capture.retainers, !retainers.rows.isEmpty else {
            out += ["No retainer holds 0.5% of the reachable bytes or more.", ""]
            return out
        }
        out.append("| Retainer | Blocks | Retained | Share | Held by | Allocated at |")
        out.append("|---|---:|---:|---:|---|---|")
        for row in retainers.rows {
            let share =
                retainers.reachableBytes > 0
                ? Units.fixed(100 * Double(row.retainedBytes) / Double(retainers.reachableBytes), decimals: 1) + "%"
                : "–"
            let site = row.allocationStack?.first.map { MarkdownReport.code($0) } ?? "–"
            // No root points at the chain's first blocks: only the virtual root dominates them, several owners hold them.
            let root = row.root.map { MarkdownReport.code($0.description) } ?? "several owners"
            out.append(
                "| \(chain(row)) | \(row.count) | \(Units.formatBytes(row.retainedBytes)) | \(share) | \(root) | "
                    + "\(site) |")
        }
        if retainers.omittedRows > 0 {
            out.append("| \(retainers.omittedRows) smaller chains | – | – | – | – | – |")
        }
        out.append("")
        return out
    }

    /// `LiveQuery` .pending → closure context ×3000 → `Document` ×3000, the nodes the row retains in bold.
    static func chain(_ row: HeapRetainer) -> String {
        var parts: [String] = []
        for (index, node) in row.nodes.enumerated() {
            var text = HeapGraphSection.typeCell(node.type) + (node.count > 1 ? " ×\(node.count)" : "")
            if let field = node.fieldName { text = MarkdownReport.cell(".\(field)") + " " + text }
            if index == row.firstRetainingNode && index > 0 { text = "**" + text + "**" }
            if row.omittedNodes > 0 && index == (row.nodes.count + 1) / 2 { parts.append("… \(row.omittedNodes) more") }
            parts.append(text)
        }
        return parts.joined(separator: " → ")
    }
}
