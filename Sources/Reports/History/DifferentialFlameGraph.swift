import HarnessModel
import Reports

/// A differential flame graph of two runs' live sets at the peak: every box as wide as the larger of its bytes
/// before and after (so what vanished still shows), coloured by the change: grown vermilion, shrunk blue,
/// unchanged grey, the deeper the colour the larger the change relative to the box. The two-column folded text
/// (`stack BEFORE AFTER`) is what Brendan Gregg's difffolded.pl writes, for flamegraph.pl and other viewers.
enum DifferentialFlameGraph {
    static let width = 1200.0
    static let frameHeight = 18.0
    static let margin = 10.0
    static let top = 64.0

    final class Node {
        let name: String
        var before = 0
        var after = 0
        var children: [String: Node] = [:]
        init(_ name: String) { self.name = name }
        var size: Int { max(before, after) }
        var depth: Int { 1 + (children.values.map(\.depth).max() ?? 0) }
    }

    static func tree(before: [String: Int], after: [String: Int]) -> Node {
        let root = Node("all")
        for (stacks, isAfter) in [(before, false), (after, true)] {
            for (path, bytes) in stacks {
                var node = root
                let visit = { (node: Node) in if isAfter { node.after += bytes } else { node.before += bytes } }
                visit(root)
                for frame in path.split(separator: ";") {
                    let name = String(frame)
                    let child = node.children[name] ?? Node(name)
                    node.children[name] = child
                    visit(child)
                    node = child
                }
            }
        }
        return root
    }

    static func render(before: [String: Int], after: [String: Int], title: String) -> String? {
        let root = tree(before: before, after: after)
        guard root.size > 0 else { return nil }
        let depth = root.depth
        let height = top + Double(depth) * frameHeight + 30
        var svg = SVGDocument(width: width, height: height)
        svg.text(title, x: margin, y: 22, size: 15, weight: "bold")
        svg.text(
            "\(Units.formatBytes(root.before)) → \(Units.formatBytes(root.after)) sampled live at the peak · width = the "
                + "larger of before and after · vermilion grew, blue shrank, grey unchanged",
            x: margin, y: 40, size: 11, fill: "#555555")
        let scale = (width - 2 * margin) / Double(root.size)
        draw(root, x: margin, level: 0, baseline: top + Double(depth) * frameHeight, scale: scale, svg: &svg)
        return svg.render(
            title: title,
            description: "Differential flame graph: "
                + leafMoves(before: before, after: after).prefix(5).map {
                    "\($0.function) \(Units.formatBytes($0.before)) to \(Units.formatBytes($0.after))"
                }.joined(separator: "; "))
    }

    private static func draw(
        _ node: Node, x: Double, level: Int, baseline: Double, scale: Double, svg: inout SVGDocument
    ) {
        let boxWidth = Double(node.size) * scale
        guard boxWidth >= 0.5 else { return }
        let y = baseline - Double(level + 1) * frameHeight
        let change = Double(node.after - node.before) / Double(max(node.size, 1))
        let fill =
            change > 0.02
            ? shade(change, base: (213, 94, 0)) : change < -0.02 ? shade(-change, base: (0, 114, 178)) : "#bbbbbb"
        svg.raw(
            "<g><title>\(SVGDocument.escape(node.name)): \(Units.formatBytes(node.before)) → "
                + "\(Units.formatBytes(node.after))</title>")
        svg.rect(x: x, y: y, width: boxWidth - 0.5, height: frameHeight - 1, fill: fill)
        let characters = Int((boxWidth - 6) / (11 * 0.6))
        if characters >= 3 {
            let label = node.name.count > characters ? String(node.name.prefix(characters - 2)) + ".." : node.name
            svg.text(label, x: x + 3, y: y + 13, size: 11)
        }
        svg.raw("</g>")
        var offset = x
        for child in node.children.values.sorted(by: { $0.name < $1.name }) {
            draw(child, x: offset, level: level + 1, baseline: baseline, scale: scale, svg: &svg)
            offset += Double(child.size) * scale
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
