import HarnessModel
import History

/// A differential flame graph of two runs' live sets at the peak: every box as wide as the larger of its bytes
/// before and after (so what vanished still shows), coloured by the change: grown vermilion, shrunk blue,
/// unchanged grey, the deeper the colour the larger the change relative to the box. The two-column folded text
/// (`stack BEFORE AFTER`) is what Brendan Gregg's difffolded.pl writes, for flamegraph.pl and other viewers.
enum DifferentialFlameGraph {
    static let width = 1200.0
    static let frameHeight = 18.0
    static let margin = 10.0
    static let top = 64.0

    /// The two folded live sets as one flame tree of two columns (before, after).
    static func tree(before: [String: Int], after: [String: Int]) -> FlameTree {
        let stacks = [before, after].map { folded in
            folded.sorted { $0.key < $1.key }.map { path, bytes in
                FlameTree.Stack(
                    frames: path.split(separator: ";").map { FlameTree.Frame(function: String($0)) }, bytes: bytes,
                    count: 0)
            }
        }
        return FlameTree.build(
            columns: [FlameTree.Column(strategy: "before"), FlameTree.Column(strategy: "after")], stacks: stacks)
    }

    static func render(before: [String: Int], after: [String: Int], title: String) -> String? {
        render(
            DifferentialFlameFigure(title: title, tree: tree(before: before, after: after), before: 0, after: 1),
            description: "Differential flame graph: "
                + leafMoves(before: before, after: after).prefix(5).map {
                    "\($0.function) \(Units.formatBytes($0.before)) to \(Units.formatBytes($0.after))"
                }.joined(separator: "; "))
    }

    /// Draws `figure`: each node as wide as the larger of its two columns, coloured by the change.
    static func render(_ figure: DifferentialFlameFigure, description: String? = nil) -> String? {
        let tree = figure.tree
        let size = { (node: Int) in max(tree.bytes[figure.before][node], tree.bytes[figure.after][node]) }
        guard size(0) > 0 else { return nil }
        let depth = tree.depth(of: 0) { size($0) > 0 }
        let height = top + Double(depth) * frameHeight + 30
        var svg = SVGDocument(width: width, height: height)
        svg.text(figure.title, x: margin, y: 22, size: 15, weight: "bold")
        svg.text(
            "\(Units.formatBytes(tree.bytes[figure.before][0])) → \(Units.formatBytes(tree.bytes[figure.after][0])) "
                + "sampled live at the peak · width = the larger of before and after · vermilion grew, blue shrank, "
                + "grey unchanged",
            x: margin, y: 40, size: 11, fill: "#555555")
        let scale = (width - 2 * margin) / Double(size(0))
        draw(0, figure, x: margin, level: 0, baseline: top + Double(depth) * frameHeight, scale: scale, svg: &svg)
        return svg.render(title: figure.title, description: description ?? "Differential flame graph")
    }

    private static func draw(
        _ node: Int, _ figure: DifferentialFlameFigure, x: Double, level: Int, baseline: Double, scale: Double,
        svg: inout SVGDocument
    ) {
        let tree = figure.tree
        let before = tree.bytes[figure.before][node]
        let after = tree.bytes[figure.after][node]
        let size = max(before, after)
        let boxWidth = Double(size) * scale
        guard boxWidth >= 0.5 else { return }
        let y = baseline - Double(level + 1) * frameHeight
        let change = Double(after - before) / Double(max(size, 1))
        let fill =
            change > 0.02
            ? shade(change, base: (213, 94, 0)) : change < -0.02 ? shade(-change, base: (0, 114, 178)) : "#bbbbbb"
        let name = tree.nodes[node].name
        svg.raw(
            "<g><title>\(SVGDocument.escape(name)): \(Units.formatBytes(before)) → \(Units.formatBytes(after))</title>")
        svg.rect(x: x, y: y, width: boxWidth - 0.5, height: frameHeight - 1, fill: fill)
        let characters = Int((boxWidth - 6) / (11 * 0.6))
        if characters >= 3 {
            let label = name.count > characters ? String(name.prefix(characters - 2)) + ".." : name
            svg.text(label, x: x + 3, y: y + 13, size: 11)
        }
        svg.raw("</g>")
        var offset = x
        for child in tree.nodes[node].children {
            let childSize = max(tree.bytes[figure.before][child], tree.bytes[figure.after][child])
            guard childSize > 0 else { continue }
            draw(child, figure, x: offset, level: level + 1, baseline: baseline, scale: scale, svg: &svg)
            offset += Double(childSize) * scale
        }
    }

    /// The base colour mixed with white, `strength` (0...1) of the way to it, at least a third.
    private static func shade(_ strength: Double, base: (Int, Int, Int)) -> String {
        let amount = min(max(strength, 0.33), 1)  // a faint tint would read as unchanged grey
        func mix(_ value: Int) -> Int { Int((255 - Double(255 - value) * amount).rounded()) }
        return "#"
            + [mix(base.0), mix(base.1), mix(base.2)].map { value in
                let digits = String(value, radix: 16)
                return digits.count == 1 ? "0" + digits : digits
            }.joined()
    }

    /// `stack BEFORE AFTER` lines, sorted by stack.
    static func folded(_ move: HistoryDiff.SiteMove) -> String {
        Set(move.before.keys).union(move.after.keys).sorted().map {
            "\($0) \(move.before[$0] ?? 0) \(move.after[$0] ?? 0)\n"
        }.joined()
    }

    /// Allocating functions (the leaf of each stack) whose bytes moved, largest move first.
    static func leafMoves(_ move: HistoryDiff.SiteMove) -> [(function: String, before: Int, after: Int, delta: Int)] {
        leafMoves(before: move.before, after: move.after)
    }

    static func leafMoves(before: [String: Int], after: [String: Int]) -> [(
        function: String, before: Int, after: Int, delta: Int
    )] {
        var sums: [String: (before: Int, after: Int)] = [:]
        for (path, bytes) in before { sums[leaf(path), default: (0, 0)].before += bytes }
        for (path, bytes) in after { sums[leaf(path), default: (0, 0)].after += bytes }
        return sums.map {
            (function: $0.key, before: $0.value.before, after: $0.value.after, delta: $0.value.after - $0.value.before)
        }
        .filter { $0.delta != 0 }
        .sorted { (abs($0.delta), $1.function) > (abs($1.delta), $0.function) }
    }

    private static func leaf(_ path: String) -> String { path.split(separator: ";").last.map(String.init) ?? path }
}
