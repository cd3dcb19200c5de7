import Foundation
import HarnessModel

/// The heap graph of one strategy in `report.md`: its leaks table (as macOS `leaks` groups them), the cycles,
/// the retaining paths, growth by type between generations and the captures that failed. Deterministic.
public enum HeapGraphSection {
    /// The section as one Markdown string; nil when the summary holds no capture and no failure.
    /// - Parameter cycleDiagram: the relative path of cycle `n`'s diagram (`CycleDiagram.svg`), numbered from 1
    ///   in the order `cycles(in:)` lists them; nil to leave the pictures out.
    public static func markdown(
        for summary: HeapGraphSummary, strategy: String, headingLevel: Int = 4,
        cycleDiagram: ((Int) -> String)? = nil
    ) -> String? {
        section(for: summary, strategy: strategy, headingLevel: headingLevel, cycleDiagram: cycleDiagram).map {
            MarkdownRenderer.render([.section($0)])
        }
    }

    /// The section's lines; empty when there is nothing to say.
    public static func lines(
        for summary: HeapGraphSummary, strategy: String, headingLevel: Int = 4,
        cycleDiagram: ((Int) -> String)? = nil
    ) -> [String] {
        markdown(for: summary, strategy: strategy, headingLevel: headingLevel, cycleDiagram: cycleDiagram).map {
            $0.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) + [""]
        } ?? []
    }

    /// The section of the document; nil when there is nothing to say. `suppressions`: the strategy's known leaks,
    /// whose groups the leaks table marks as such.
    static func section(
        for summary: HeapGraphSummary, strategy: String, headingLevel: Int = 4,
        suppressions: [LeakSuppression] = [], cycleDiagram: ((Int) -> String?)? = nil,
        title: ((Int, Int) -> String)? = nil
    ) -> Section? {
        guard !summary.captures.isEmpty || !summary.failures.isEmpty else { return nil }
        var blocks: [Block] = []
        if summary.captures.count > 1 { blocks.append(.paragraph(capturesLine(summary.captures))) }
        if let last = summary.last {
            blocks += captureBlocks(last, suppressions: suppressions, cycleDiagram: cycleDiagram, title: title)
        }
        blocks += growthBlocks(summary)
        if !summary.failures.isEmpty {
            let failures = summary.failures.map {
                "\(code: $0.label): \(reason($0.reason)) (\($0.detail))" as Phrase
            }
            blocks.append(
                .paragraph(
                    "\(strong: "Captures that failed") (the case was measured without them): "
                        + Phrase.joined(failures, separator: "; ") + "."))
        }
        return Section(level: headingLevel, heading: "Heap graph: \(code: strategy)", blocks: blocks)
    }

    /// The cycles of a capture in the order the section numbers them: each shown group's root cycle, then its
    /// nested cycles, group by group.
    public static func cycles(in capture: HeapCaptureSummary) -> [(group: Int, cycle: HeapCycle)] {
        capture.groups.enumerated().flatMap { index, group in
            (group.cycle.map { [(index + 1, $0)] } ?? []) + group.nestedCycles.map { (index + 1, $0) }
        }
    }

    /// The captures before the last: each with its leaked blocks when there are a few, else the leaked blocks per
    /// capture in one list.
    static func capturesLine(_ captures: [HeapCaptureSummary]) -> Phrase {
        if captures.count <= 4 {
            return "Captures: "
                + Phrase.joined(captures.map { "\(code: $0.label) \(leakedPhrase($0))" }, separator: "; ") + "."
        }
        return "\(captures.count) captures, \(code: captures[0].label) to \(code: captures[captures.count - 1].label); "
            + "leaked blocks in each: \(captures.map { String($0.leakedBlocks) }.joined(separator: ", "))."
    }

    static func leakedPhrase(_ capture: HeapCaptureSummary) -> Phrase {
        "\(count(capture.leakedBlocks, "leaked block")) (\(Value.bytes(Double(capture.leakedBytes))))"
            + (capture.cycleCount > 0 ? ", \(count(capture.cycleCount, "cycle"))" : "")
    }

    static func captureBlocks(
        _ capture: HeapCaptureSummary, suppressions: [LeakSuppression] = [], cycleDiagram: ((Int) -> String?)?,
        title: ((Int, Int) -> String)?
    ) -> [Block] {
        let groupCount = capture.groups.map(\.count).reduce(0, +) + capture.omittedGroups
        // Groups of one signature are one row: say how many rows, when that is fewer than the groups.
        let rows = count(capture.groups.count, "signature")
        var signatures = Phrase()
        if capture.groups.count < groupCount {
            signatures = capture.omittedGroups > 0 ? ", the largest \(rows) shown" : " of \(rows)"
        }
        var out: [Block] = [
            .paragraph(
                "\(code: capture.label): \(count(capture.liveBlocks, "live block")) "
                    + "(\(Value.bytes(Double(capture.liveBytes)))) from \(count(capture.rootCount, "root")); "
                    + "\(leakedPhrase(capture)) in \(count(groupCount, "group"))\(signatures) "
                    + "(\(capture.rootCycleCount) root cycle\(capture.rootCycleCount == 1 ? "" : "s"), "
                    + "\(capture.rootLeakCount) root leak\(capture.rootLeakCount == 1 ? "" : "s"))"
                    + knownPhrase(SuppressedLeaks(capture, suppressions: suppressions)) + ".")
        ]
        if !capture.groups.isEmpty {
            out.append(.table(leaksTable(capture, suppressions: suppressions)))
            out += knownLeakBlocks(capture, suppressions: suppressions)
            out += cycleBlocks(capture, cycleDiagram: cycleDiagram, title: title)
        }
        out += pathBlocks(capture)
        return out
    }

    /// What of a capture's leaks the strategy's suppressions know: empty when none.
    static func knownPhrase(_ known: SuppressedLeaks) -> Phrase {
        guard known.groups > 0 else { return Phrase() }
        let (blocks, bytes) = (known.unreachable.blocks, Double(known.unreachable.bytes))
        return "; \(count(known.groups, "group")) of \(count(blocks, "block")) (\(Value.bytes(bytes))) "
            + "\(known.groups == 1 ? "is a known leak" : "are known leaks"), suppressed"
    }

    /// Why each suppressed group is a known leak, as its suppression says; nothing when no group is.
    static func knownLeakBlocks(_ capture: HeapCaptureSummary, suppressions: [LeakSuppression]) -> [Block] {
        let known = capture.groups.enumerated().compactMap { index, group in
            suppressions.first { $0.matches(group) }.map { (index + 1, $0) }
        }
        guard !known.isEmpty else { return [] }
        let items = known.map { number, suppression in
            "group \(number): \(suppression.reason.trimmingCharacters(in: .whitespacesAndNewlines))" as Phrase
        }
        return [
            .paragraph("\(strong: "Known leaks") (the suppressions' reasons): " + Phrase.joined(items, separator: "; "))
        ]
    }

    /// The leak groups, largest first; a group a suppression matches says so, with the suppression's reason.
    static func leaksTable(_ capture: HeapCaptureSummary, suppressions: [LeakSuppression] = []) -> Table {
        var table = Table(columns: [
            .init("Group", .number), .init("Signature"), .init("Count", .number), .init("Types"),
            .init("Blocks", .number), .init("Bytes", .number), .init("Root"), .init("Allocated at"),
        ])
        var cycleNumber = 0
        for (index, group) in capture.groups.enumerated() {
            let types =
                Phrase.joined(group.types.map { "\(typeCell($0.type)) ×\($0.count)" }, separator: ", ")
                + (group.omittedTypes > 0 ? ", \(group.omittedTypes) more" : "")
            var root: Phrase
            if group.cycle != nil {
                cycleNumber += 1
                root =
                    group.rootBlocks == 1
                    ? "block referencing itself (cycle \(cycleNumber))"
                    : "cycle of \(group.rootBlocks) (cycle \(cycleNumber))"
            } else {
                root = "root leak " + typeCell(group.rootType)
            }
            if suppressions.contains(where: { $0.matches(group) }) { root = "known leak, suppressed: " + root }
            if !group.nestedCycles.isEmpty {
                let first = cycleNumber + 1
                cycleNumber += group.nestedCycles.count
                root.append(
                    first == cycleNumber ? ", holds cycle \(first)" : ", holds cycles \(first)–\(cycleNumber)")
            }
            let site: Phrase = group.allocationStack?.first.map { .code($0) } ?? "–"
            let signature: Phrase = group.signature.map { .code($0) } ?? "–"
            table.rows.append([
                .value(.count(index + 1)), signature, .value(.count(group.count)), types,
                .value(.count(group.blocks)), .value(.bytes(Double(group.bytes))), root, site,
            ])
        }
        if capture.omittedGroups > 0 {
            table.rows.append([
                "–", "–", .value(.count(capture.omittedGroups)), "smaller groups",
                .value(.count(capture.omittedGroupBlocks)), .value(.bytes(Double(capture.omittedGroupBytes))), "–",
                "–",
            ])
        }
        return table
    }

    static func cycleBlocks(
        _ capture: HeapCaptureSummary, cycleDiagram: ((Int) -> String?)?, title: ((Int, Int) -> String)?
    ) -> [Block] {
        var out: [Block] = []
        for (number, entry) in cycles(in: capture).enumerated() {
            out.append(
                .paragraph(
                    "Cycle \(number + 1) (group \(entry.group), \(count(entry.cycle.memberBlocks, "block"))): "
                        + cycleText(entry.cycle)))
            if let cycleDiagram, let file = cycleDiagram(number + 1) {
                let figure = cycleFigure(entry.cycle, title: title?(number + 1, entry.group) ?? "Leaked cycle")
                out.append(.figure(FigureBlock(.cycle(figure), file: file, alt: "cycle \(number + 1)")))
            }
        }
        return out
    }

    /// A cycle as the figure its diagram draws.
    static func cycleFigure(_ cycle: HeapCycle, title: String) -> CycleFigure {
        CycleFigure(
            title: title, memberBlocks: cycle.memberBlocks, memberBytes: cycle.memberBytes,
            hops: cycle.edges.map {
                CycleFigure.Hop(
                    from: typeLabel($0.from), kind: Int($0.from.kind.rawValue), field: edgeLabel($0),
                    reference: $0.fieldName ?? "+\($0.byteOffset)", to: typeLabel($0.to))
            }, omittedHops: cycle.omittedEdges)
    }

    /// The field name, or the reference's byte offset when reflection gave none; unowned references say so.
    static func edgeLabel(_ edge: HeapCycleEdge) -> String {
        (edge.fieldName ?? "+\(edge.byteOffset)") + (edge.kind == .unowned ? " (unowned)" : "")
    }

    /// `App.A.b` → `App.B.c` → `App.A`: each hop as the holder's type and field, ending where it started.
    public static func cycleText(_ cycle: HeapCycle) -> Phrase {
        guard let first = cycle.edges.first else { return "–" }
        let hops = cycle.edges.map { hop($0.from, field: $0.fieldName ?? "+\($0.byteOffset)", kind: $0.kind) }
        let end: [Phrase] = cycle.omittedEdges > 0 ? ["… \(cycle.omittedEdges) more"] : []
        return Phrase.joined(hops + end + [hop(first.from, field: nil, kind: nil)], separator: " → ")
    }

    /// A named type and its field as one code span (`App.Store.observers`); an unnamed block in words, its
    /// field apart (closure context `.self`). A reference without a field name is given by its byte offset
    /// (`App.Store+24`, block of 48 bytes `+8`).
    static func hop(_ type: HeapTypeName, field: String?, kind: HeapEdgeKind?) -> Phrase {
        let text: Phrase =
            type.name.isEmpty
            ? unnamedLabel(type) + (field.map { " \(code: member($0))" } ?? Phrase())
            : .code(type.name + (field.map(member) ?? ""))
        return text + (kind == .unowned ? " (unowned)" : "")
    }

    /// `.field`, or `+8` for a byte offset.
    static func member(_ field: String) -> String { field.hasPrefix("+") ? field : "." + field }

    /// A type for a table cell: a named type as code, an unnamed block in words.
    static func typeCell(_ type: HeapTypeName) -> Phrase {
        type.name.isEmpty ? unnamedLabel(type) : .code(type.name)
    }

    static func pathBlocks(_ capture: HeapCaptureSummary) -> [Block] {
        guard !capture.paths.isEmpty else { return [] }
        var items = capture.paths.map { path in
            let instances = "\(path.reachableInstances) reachable, \(path.leakedInstances) leaked"
            let asked: Phrase = path.type.map(typeCell) ?? "\(code: path.query.isEmpty ? "?" : path.query)"
            return ListItem(asked + " (\(reasonText(path.reason)), \(instances)): " + pathText(path) + rootsText(path))
        }
        if capture.omittedPaths > 0 {
            items.append(ListItem("and \(count(capture.omittedPaths, "more path")) not shown"))
        }
        return [
            .paragraph(
                "\(strong: "What keeps them alive") (the shortest chain of references from the most recognisable "
                    + "root: a global, a static or thread-local storage, then a known function's frame, then any "
                    + "stack word):"),
            .list(items),
        ]
    }

    /// global `ProfileStore.shared` → `App.ProfileStore.signal` → … → `App.ProfileScreen`; or why there is none.
    public static func pathText(_ path: HeapRetainingPath) -> Phrase {
        guard let root = path.root else {
            if path.leakedInstances > 0 { return "no root reaches it (leaked: see the groups above)" }
            return path.reason == .growingType
                ? "none is live in this capture (it grew between earlier ones)" : "no such block"
        }
        var parts = [rootText(root)]
        let head = path.nodes.count - (path.omittedNodes > 0 ? path.nodes.count / 2 : 0)
        for (index, node) in path.nodes.enumerated() {
            if index == head && path.omittedNodes > 0 { parts.append("… \(path.omittedNodes) more") }
            parts.append(hop(node.type, field: node.fieldName ?? node.byteOffset.map { "+\($0)" }, kind: node.edgeKind))
        }
        return Phrase.joined(parts, separator: " → ")
    }

    /// The distinct roots when there are several (`; held from global `cache` ×12, thread 1 stack in `run()` ×3`), and
    /// a warning when the only roots are conservative ones; empty otherwise.
    static func rootsText(_ path: HeapRetainingPath) -> Phrase {
        let roots = path.roots ?? []
        var text = Phrase()
        if roots.count > 1 || (path.omittedRoots ?? 0) > 0 {
            text.append(
                "; held from "
                    + Phrase.joined(roots.map { "\(rootText($0.root)) ×\($0.instances)" }, separator: ", "))
            if let omitted = path.omittedRoots, omitted > 0 { text.append(" and \(count(omitted, "more root"))") }
        }
        if path.onlyConservativeRoots {
            text.append(" (the only root is an unnamed stack word or register: perhaps a stale value, not an owner)")
        }
        return text
    }

    /// The root in words: a global by its symbol, a thread by its stack frame's function.
    public static func rootText(_ root: HeapPathRoot) -> Phrase {
        switch root.kind {
        case .global(let symbol, _): return "global \(code: symbol)"
        case .threadStack(let thread, let name, let frame):
            let who = "thread \(thread)" + (name.map { " (\($0))" } ?? "")
            return "\(who) stack" + (frame.map { " in \(code: $0)" } ?? Phrase())
        case .register(let thread, let name): return "thread \(thread) register \(code: name)"
        case .tls(let thread): return "thread \(thread) thread-local storage"
        case .other: return Phrase(stringLiteral: root.description)
        }
    }

    /// A type as a reader names it: its name, or what the block is (`closure context`, `block of 48 bytes`) and,
    /// when its allocation stack was recorded, where it was allocated (`block of 48 bytes allocated at Foo.bar()`).
    public static func typeLabel(_ type: HeapTypeName) -> String {
        guard type.name.isEmpty else { return type.name }
        return kindLabel(type) + (type.allocationSite.map { " allocated at " + $0 } ?? "")
    }

    /// An unnamed type as a phrase: what the block is, its allocation site as code.
    static func unnamedLabel(_ type: HeapTypeName) -> Phrase {
        Phrase(stringLiteral: kindLabel(type)) + (type.allocationSite.map { " allocated at \(code: $0)" } ?? Phrase())
    }

    /// What an unnamed block is: `closure context`, `block of 48 bytes`.
    private static func kindLabel(_ type: HeapTypeName) -> String {
        let size = type.unnamedBlockBytes.map { " of \($0) bytes" } ?? ""
        switch type.kind {
        case .swiftObject: return "Swift object" + size
        case .closureContext: return "closure context"
        case .box: return "box"
        case .arrayStorage: return "array storage"
        case .dictionaryStorage: return "dictionary storage"
        case .setStorage: return "set storage"
        case .stringStorage: return "string storage"
        case .sideTable: return "side table"
        case .cxxObject: return "C++ object" + size
        case .unknown: return "block" + size
        }
    }

    static func reasonText(_ reason: HeapPathReason) -> String {
        switch reason {
        case .trackedSurvivor: return "tracked survivor"
        case .growingType: return "grows every iteration"
        case .requestedType: return "asked for"
        }
    }

    static func reason(_ reason: HeapCaptureFailure.Reason) -> String {
        switch reason {
        case .agentNotLoaded: return "the agent was not preloaded"
        case .stopTheWorldFailed: return "the threads could not be stopped"
        case .timedOut: return "timed out"
        case .outOfMemory: return "out of memory"
        case .unreadable: return "the capture file could not be read"
        case .other: return "failed"
        }
    }

    static func count(_ value: Int, _ noun: String) -> Phrase {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }
}

extension HeapGraphSection {
    /// Rows of the growth table at most: the suspects first, then the largest growth in bytes.
    static let maximumGrowthRows = 12

    static func growthBlocks(_ summary: HeapGraphSummary) -> [Block] {
        let changed = summary.growth.filter { ($0.bytes.last ?? 0) != ($0.bytes.first ?? 0) || $0.isSuspect }
        guard !changed.isEmpty, let first = summary.generationLabels.first, let last = summary.generationLabels.last
        else { return [] }
        let shown = changed.sorted { lhs, rhs in
            let (left, right) = (Self.growthBytes(lhs), Self.growthBytes(rhs))
            return lhs.isSuspect != rhs.isSuspect ? lhs.isSuspect : left != right ? left > right : lhs.type < rhs.type
        }
        .prefix(maximumGrowthRows)
        var table = Table(columns: [
            .init("Type"), .init("Count, first → last", .number), .init("Bytes, first → last", .number),
            .init("Median change per generation", .number), .init("Suspect"),
        ])
        for growth in shown {
            let counts: Phrase = "\(growth.counts.first ?? 0) → \(growth.counts.last ?? 0)"
            let bytes: Phrase =
                "\(Value.bytes(Double(growth.bytes.first ?? 0))) → \(Value.bytes(Double(growth.bytes.last ?? 0)))"
            let change: Phrase =
                "\(Value.signedCount(Int(median(growth.countDeltas).rounded()))) "
                + "(\(Value.signedBytes(median(growth.byteDeltas))))"
            table.rows.append([
                typeCell(growth.type), counts, bytes, change, growth.isSuspect ? "\(strong: "yes")" : "no",
            ])
        }
        let omitted = changed.count - shown.count + summary.omittedGrowthTypes
        if omitted > 0 { table.rows.append(["\(count(omitted, "more type")) that changed", "–", "–", "–", "–"]) }
        return [
            .paragraph(
                "\(strong: "Growth by type") over \(count(summary.generationLabels.count, "generation")), "
                    + "\(code: first) to \(code: last) (a suspect grows in every one, reachable or not):"),
            .table(table),
        ]
    }

    private static func growthBytes(_ growth: HeapTypeGrowth) -> Int {
        (growth.bytes.last ?? 0) - (growth.bytes.first ?? 0)
    }

    /// The median change (`Statistics.median`); 0 for none.
    static func median(_ deltas: [Int]) -> Double {
        Statistics.median(deltas.map(Double.init)) ?? 0
    }

}
