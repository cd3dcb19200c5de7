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
        let lines = lines(for: summary, strategy: strategy, headingLevel: headingLevel, cycleDiagram: cycleDiagram)
        return lines.isEmpty ? nil : lines.joined(separator: "\n") + "\n"
    }

    /// The section's lines; empty when there is nothing to say.
    public static func lines(
        for summary: HeapGraphSummary, strategy: String, headingLevel: Int = 4,
        cycleDiagram: ((Int) -> String)? = nil
    ) -> [String] {
        guard !summary.captures.isEmpty || !summary.failures.isEmpty else { return [] }
        // A heading needs at least one '#' and Markdown has no level beyond six.
        let level = min(max(headingLevel, 1), 6)
        var out = [
            String(repeating: "#", count: level) + " Heap graph: " + MarkdownReport.code(strategy, inTable: false), "",
        ]
        if summary.captures.count > 1 {
            out.append(capturesLine(summary.captures))
            out.append("")
        }
        if let last = summary.last {
            out += captureLines(last, cycleDiagram: cycleDiagram)
        }
        out += growthLines(summary)
        if !summary.failures.isEmpty {
            out.append(
                "**Captures that failed** (the case was measured without them): "
                    + summary.failures.map {
                        "\(MarkdownReport.code($0.label, inTable: false)): \(reason($0.reason)) (\($0.detail))"
                    }
                    .joined(separator: "; ") + ".")
            out.append("")
        }
        return out
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
    static func capturesLine(_ captures: [HeapCaptureSummary]) -> String {
        if captures.count <= 4 {
            return "Captures: "
                + captures.map { "\(MarkdownReport.code($0.label, inTable: false)) \(leakedPhrase($0))" }
                .joined(separator: "; ") + "."
        }
        let labels = [captures[0], captures[captures.count - 1]].map { MarkdownReport.code($0.label, inTable: false) }
        return "\(captures.count) captures, \(labels[0]) to \(labels[1]); leaked blocks in each: "
            + captures.map { String($0.leakedBlocks) }.joined(separator: ", ") + "."
    }

    static func leakedPhrase(_ capture: HeapCaptureSummary) -> String {
        "\(count(capture.leakedBlocks, "leaked block")) (\(Units.formatBytes(capture.leakedBytes)))"
            + (capture.cycleCount > 0 ? ", \(count(capture.cycleCount, "cycle"))" : "")
    }

    static func captureLines(_ capture: HeapCaptureSummary, cycleDiagram: ((Int) -> String)?) -> [String] {
        let groupCount = capture.groups.map(\.count).reduce(0, +) + capture.omittedGroups
        // Groups of one signature are one row: say how many rows, when that is fewer than the groups.
        let rows = count(capture.groups.count, "signature")
        var signatures = ""
        if capture.groups.count < groupCount {
            signatures = capture.omittedGroups > 0 ? ", the largest \(rows) shown" : " of \(rows)"
        }
        var out = [
            "\(MarkdownReport.code(capture.label, inTable: false)): \(count(capture.liveBlocks, "live block")) "
                + "(\(Units.formatBytes(capture.liveBytes))) from \(count(capture.rootCount, "root")); "
                + "\(leakedPhrase(capture)) in \(count(groupCount, "group"))\(signatures) "
                + "(\(capture.rootCycleCount) root cycle\(capture.rootCycleCount == 1 ? "" : "s"), "
                + "\(capture.rootLeakCount) root leak\(capture.rootLeakCount == 1 ? "" : "s")).",
            "",
        ]
        if !capture.groups.isEmpty {
            out += leaksTable(capture)
            out += cycleLines(capture, cycleDiagram: cycleDiagram)
        }
        out += pathLines(capture)
        return out
    }

    static func leaksTable(_ capture: HeapCaptureSummary) -> [String] {
        var out = [
            "| Group | Signature | Count | Types | Blocks | Bytes | Root | Allocated at |",
            "|---:|---|---:|---|---:|---:|---|---|",
        ]
        var cycleNumber = 0
        for (index, group) in capture.groups.enumerated() {
            let types =
                group.types.map { "\(typeCell($0.type)) ×\($0.count)" }.joined(separator: ", ")
                + (group.omittedTypes > 0 ? ", \(group.omittedTypes) more" : "")
            var root: String
            if group.cycle != nil {
                cycleNumber += 1
                root =
                    group.rootBlocks == 1
                    ? "block referencing itself (cycle \(cycleNumber))"
                    : "cycle of \(group.rootBlocks) (cycle \(cycleNumber))"
            } else {
                root = "root leak " + typeCell(group.rootType)
            }
            if !group.nestedCycles.isEmpty {
                let first = cycleNumber + 1
                cycleNumber += group.nestedCycles.count
                root += first == cycleNumber ? ", holds cycle \(first)" : ", holds cycles \(first)–\(cycleNumber)"
            }
            let site = group.allocationStack?.first.map { MarkdownReport.code($0) } ?? "–"
            let signature = group.signature.map { MarkdownReport.code($0) } ?? "–"
            out.append(
                "| \(index + 1) | \(signature) | \(group.count) | \(types) | \(group.blocks) | "
                    + "\(Units.formatBytes(group.bytes)) | \(root) | \(site) |")
        }
        if capture.omittedGroups > 0 {
            out.append(
                "| – | – | \(capture.omittedGroups) | smaller groups | \(capture.omittedGroupBlocks) | "
                    + "\(Units.formatBytes(capture.omittedGroupBytes)) | – | – |")
        }
        out.append("")
        return out
    }

    static func cycleLines(_ capture: HeapCaptureSummary, cycleDiagram: ((Int) -> String)?) -> [String] {
        var out: [String] = []
        for (number, entry) in cycles(in: capture).enumerated() {
            out.append(
                "Cycle \(number + 1) (group \(entry.group), \(count(entry.cycle.memberBlocks, "block"))): \(cycleText(entry.cycle))"
            )
            if let cycleDiagram {
                out.append("")
                out.append("![cycle \(number + 1)](\(cycleDiagram(number + 1)))")
            }
            out.append("")
        }
        return out
    }

    /// `App.A.b` → `App.B.c` → `App.A`: each hop as the holder's type and field, ending where it started.
    public static func cycleText(_ cycle: HeapCycle) -> String {
        guard let first = cycle.edges.first else { return "–" }
        let hops = cycle.edges.map { hop($0.from, field: $0.fieldName ?? "+\($0.byteOffset)", kind: $0.kind) }
        let end = cycle.omittedEdges > 0 ? ["… \(cycle.omittedEdges) more"] : []
        return (hops + end + [hop(first.from, field: nil, kind: nil)]).joined(separator: " → ")
    }

    /// A named type and its field as one code span (`App.Store.observers`); an unnamed block in words, its
    /// field apart (closure context `.self`). A reference without a field name is given by its byte offset
    /// (`App.Store+24`, block of 48 bytes `+8`).
    static func hop(_ type: HeapTypeName, field: String?, kind: HeapEdgeKind?, inTable: Bool = false) -> String {
        let text =
            type.name.isEmpty
            ? markdownLabel(type, inTable: inTable)
                + (field.map { " " + MarkdownReport.code(member($0), inTable: inTable) } ?? "")
            : MarkdownReport.code(type.name + (field.map(member) ?? ""), inTable: inTable)
        return text + (kind == .unowned ? " (unowned)" : "")
    }

    /// `.field`, or `+8` for a byte offset.
    static func member(_ field: String) -> String { field.hasPrefix("+") ? field : "." + field }

    /// A type for a table cell: a named type as code, an unnamed block in words.
    static func typeCell(_ type: HeapTypeName) -> String {
        type.name.isEmpty ? markdownLabel(type, inTable: true) : MarkdownReport.code(type.name)
    }

    static func pathLines(_ capture: HeapCaptureSummary) -> [String] {
        guard !capture.paths.isEmpty else { return [] }
        var out = [
            "**What keeps them alive** (the shortest chain of references from the most recognisable root: a global, "
                + "a static or thread-local storage, then a known function's frame, then any stack word):",
            "",
        ]
        for path in capture.paths {
            let instances = "\(path.reachableInstances) reachable, \(path.leakedInstances) leaked"
            out.append(
                "- \(MarkdownReport.code(path.query.isEmpty ? "?" : path.query, inTable: false)) (\(reasonText(path.reason)), \(instances)): \(pathText(path))"
                    + rootsText(path))
        }
        if capture.omittedPaths > 0 { out.append("- and \(count(capture.omittedPaths, "more path")) not shown") }
        out.append("")
        return out
    }

    /// global `ProfileStore.shared` → `App.ProfileStore.signal` → … → `App.ProfileScreen`; or why there is none.
    public static func pathText(_ path: HeapRetainingPath) -> String {
        guard let root = path.root else {
            return path.leakedInstances > 0 ? "no root reaches it (leaked: see the groups above)" : "no such block"
        }
        var parts = [rootText(root)]
        let head = path.nodes.count - (path.omittedNodes > 0 ? path.nodes.count / 2 : 0)
        for (index, node) in path.nodes.enumerated() {
            if index == head && path.omittedNodes > 0 { parts.append("… \(path.omittedNodes) more") }
            parts.append(hop(node.type, field: node.fieldName ?? node.byteOffset.map { "+\($0)" }, kind: node.edgeKind))
        }
        return parts.joined(separator: " → ")
    }

    /// The distinct roots when there are several (`; held from global `cache` ×12, thread 1 stack in `run()` ×3`), and
    /// a warning when the only roots are conservative ones; empty otherwise.
    static func rootsText(_ path: HeapRetainingPath) -> String {
        let roots = path.roots ?? []
        var text = ""
        if roots.count > 1 || (path.omittedRoots ?? 0) > 0 {
            text += "; held from " + roots.map { "\(rootText($0.root)) ×\($0.instances)" }.joined(separator: ", ")
            if let omitted = path.omittedRoots, omitted > 0 { text += " and \(count(omitted, "more root"))" }
        }
        if path.onlyConservativeRoots {
            text += " (the only root is an unnamed stack word or register: perhaps a stale value, not an owner)"
        }
        return text
    }

    /// The root in words: a global by its symbol, a thread by its stack frame's function.
    public static func rootText(_ root: HeapPathRoot) -> String {
        switch root.kind {
        case .global(let symbol, _): return "global " + MarkdownReport.code(symbol, inTable: false)
        case .threadStack(let thread, let name, let frame):
            let who = "thread \(thread)" + (name.map { " (\($0))" } ?? "")
            return "\(who) stack" + (frame.map { " in " + MarkdownReport.code($0, inTable: false) } ?? "")
        case .register(let thread, let name): return "thread \(thread) register `\(name)`"
        case .tls(let thread): return "thread \(thread) thread-local storage"
        case .other: return root.description
        }
    }

    /// A type as a reader names it: its name, or what the block is (`closure context`, `block of 48 bytes`) and,
    /// when its allocation stack was recorded, where it was allocated (`block of 48 bytes allocated at Foo.bar()`).
    public static func typeLabel(_ type: HeapTypeName) -> String {
        guard type.name.isEmpty else { return type.name }
        return kindLabel(type) + (type.allocationSite.map { " allocated at " + $0 } ?? "")
    }

    /// An unnamed type in Markdown: what the block is, its allocation site as code.
    static func markdownLabel(_ type: HeapTypeName, inTable: Bool) -> String {
        kindLabel(type)
            + (type.allocationSite.map { " allocated at " + MarkdownReport.code($0, inTable: inTable) } ?? "")
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

    static func count(_ value: Int, _ noun: String) -> String {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }
}

extension HeapGraphSection {
    /// Rows of the growth table at most: the suspects first, then the largest growth in bytes.
    static let maximumGrowthRows = 12

    static func growthLines(_ summary: HeapGraphSummary) -> [String] {
        let changed = summary.growth.filter { ($0.bytes.last ?? 0) != ($0.bytes.first ?? 0) || $0.isSuspect }
        guard !changed.isEmpty, let first = summary.generationLabels.first, let last = summary.generationLabels.last
        else { return [] }
        let shown = changed.sorted { lhs, rhs in
            let (left, right) = (Self.growthBytes(lhs), Self.growthBytes(rhs))
            return lhs.isSuspect != rhs.isSuspect ? lhs.isSuspect : left != right ? left > right : lhs.type < rhs.type
        }
        .prefix(maximumGrowthRows)
        var out = [
            "**Growth by type** over \(count(summary.generationLabels.count, "generation")), "
                + "\(MarkdownReport.code(first, inTable: false)) to \(MarkdownReport.code(last, inTable: false)) "
                + "(a suspect grows in every one, reachable or not):",
            "",
            "| Type | Count, first → last | Bytes, first → last | Median change per generation | Suspect |",
            "|---|---:|---:|---:|---|",
        ]
        for growth in shown {
            let counts = "\(growth.counts.first ?? 0) → \(growth.counts.last ?? 0)"
            let bytes = "\(Units.formatBytes(growth.bytes.first ?? 0)) → \(Units.formatBytes(growth.bytes.last ?? 0))"
            let change = "\(signed(median(growth.countDeltas))) (\(signedBytes(median(growth.byteDeltas))))"
            out.append(
                "| \(typeCell(growth.type)) | \(counts) | \(bytes) | \(change) | \(growth.isSuspect ? "**yes**" : "no") |"
            )
        }
        let omitted = changed.count - shown.count + summary.omittedGrowthTypes
        if omitted > 0 { out.append("| \(count(omitted, "more type")) that changed | – | – | – | – |") }
        out.append("")
        return out
    }

    private static func growthBytes(_ growth: HeapTypeGrowth) -> Int {
        (growth.bytes.last ?? 0) - (growth.bytes.first ?? 0)
    }

    /// The middle value (the lower of the two middle ones for an even count); 0 for none.
    static func median(_ values: [Int]) -> Int {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[(sorted.count - 1) / 2]
    }

    static func signed(_ value: Int) -> String { value > 0 ? "+\(value)" : "\(value)" }

    static func signedBytes(_ bytes: Int) -> String { (bytes > 0 ? "+" : "") + Units.formatBytes(bytes) }
}
