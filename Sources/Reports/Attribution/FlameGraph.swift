import HarnessModel

/// A flame graph of the live set at the peak: one box per function on a stack, as wide as the
/// live bytes allocated below it, root at the bottom, the allocating function on top.
///
/// Readable without JavaScript: every box carries a `<title>` tooltip (function, source location,
/// bytes, share, blocks), labels are cut to fit their box, and the `<desc>` lists the top sites.
/// Colours (Okabe–Ito): the user's code orange, library code (standard library, Foundation, libc,
/// Dispatch) sky blue, the root grey.
public enum FlameGraph {
    /// Renders the flame graph; nil when nothing is live at the peak.
    /// - Parameters:
    ///   - title: what the graph shows, e.g. `live-query / unbounded-dispatch: live memory at the peak`.
    ///   - minimumWidth: boxes narrower than this many pixels are not drawn (their bytes stay in their parent's width).
    public static func render(
        _ profile: AllocationProfile, title: String, width: Double = 1200,
        minimumWidth: Double = 0.5
    ) -> String? {
        let tree = Node.build(profile)
        guard tree.bytes > 0 else { return nil }
        var graph = Layout(tree: tree, width: width, minimumWidth: minimumWidth)
        graph.drawHeading(title, profile: profile)
        graph.draw(tree, x: Layout.left, level: 0)
        graph.drawFootnote()
        return graph.svg.render(title: title, description: description(profile, sampledBytes: tree.bytes))
    }

    /// What the graph shows in words, with the largest allocation sites.
    private static func description(_ profile: AllocationProfile, sampledBytes: Int) -> String {
        let sites = profile.siteTable(limit: 5)
        return
            "Flame graph of the memory live at the peak above the baseline, \(Units.formatBytes(sampledBytes)) sampled, "
            + "by allocation stack: each box is a function, as wide as the bytes allocated by it and the functions it called. "
            + "Largest allocation sites: "
            + sites.rows.map {
                "\($0.site.function) (\($0.site.shortLocation)) \(Units.formatBytes($0.liveBytes)), \(Units.fixed($0.shareOfPeak * 100, decimals: 1))%"
            }
            .joined(separator: "; ") + "."
    }

    /// Where the boxes go (root at the bottom, widths in proportion to bytes) and the document they are drawn into.
    private struct Layout {
        static let frameHeight = 18.0
        static let left = 10.0
        static let right = 10.0
        static let top = 78.0
        static let bottom = 34.0

        let tree: Node
        let minimumWidth: Double
        let height: Double
        /// Pixels per byte.
        let scale: Double
        /// The bottom of the root box.
        let baseline: Double
        var svg: SVGDocument
        /// Boxes not drawn for being narrower than `minimumWidth`.
        var hidden = 0

        init(tree: Node, width: Double, minimumWidth: Double) {
            self.tree = tree
            self.minimumWidth = minimumWidth
            let plotWidth = width - Self.left - Self.right
            let depth = tree.depth
            height = Self.top + Double(depth) * Self.frameHeight + Self.bottom
            scale = plotWidth / Double(tree.bytes)
            baseline = Self.top + Double(depth) * Self.frameHeight
            svg = SVGDocument(width: width, height: height)
        }

        /// Title, subtitle and legend.
        mutating func drawHeading(_ title: String, profile: AllocationProfile) {
            svg.text(title, x: Self.left, y: 22, size: 15, weight: "bold")
            let measured = profile.peakNetBytes
            let subtitle =
                "\(ValueAxis.compactBytes(Double(tree.bytes))) sampled live above the baseline at the peak"
                + (measured > 0 ? " (measured: \(ValueAxis.compactBytes(Double(measured))))" : "")
                + " · one sample per \(ValueAxis.compactBytes(Double(profile.sampleMeanBytes))) on average"
                + " · width = bytes · callers below, the allocating function on top"
            svg.text(subtitle, x: Self.left, y: 40, size: 11, fill: "#555555")
            var legendX = Self.left
            for (label, colour) in [("your code", Colours.user), ("library code", Colours.library)] {
                svg.rect(x: legendX, y: 50, width: 12, height: 12, fill: colour)
                svg.text(label, x: legendX + 17, y: 60, size: 11, fill: "#333333")
                legendX += 17 + SVGDocument.textWidth(label, size: 11) + 20
            }
            svg.text("hover a box for its source location and bytes", x: legendX, y: 60, size: 11, fill: "#777777")
        }

        /// Draws `node`'s box at `x` and `level` (0 is the root), then its children on top of it, left to right.
        mutating func draw(_ node: Node, x: Double, level: Int) {
            let boxWidth = Double(node.bytes) * scale
            guard boxWidth >= minimumWidth else {
                hidden += 1
                return
            }
            let y = baseline - Double(level + 1) * Self.frameHeight
            svg.raw(box(node, x: x, y: y, width: boxWidth, level: level))
            var childX = x
            for child in node.children {
                draw(child, x: childX, level: level + 1)
                childX += Double(child.bytes) * scale
            }
        }

        /// One box: its tooltip, its rectangle, and a label where one fits.
        func box(_ node: Node, x: Double, y: Double, width boxWidth: Double, level: Int) -> String {
            let colour = level == 0 ? Colours.root : (node.isLibrary ? Colours.library : Colours.user)
            var element = "<g><title>\(SVGDocument.escape(tooltip(node)))</title>"
            element +=
                "<rect x=\"\(SVGDocument.number(x))\" y=\"\(SVGDocument.number(y))\" width=\"\(SVGDocument.number(boxWidth))\" "
                + "height=\"\(SVGDocument.number(Self.frameHeight - 1))\" fill=\"\(colour)\" stroke=\"#ffffff\" stroke-width=\"0.5\"/>"
            // The box's bytes beside its name where both fit; else the name, cut to fit.
            let name = level == 0 ? "all stacks" : node.name
            let sized = "\(name) · \(ValueAxis.compactBytes(Double(node.bytes / 1024 * 1024)))"
            if let label = SVGDocument.textWidth(sized, size: 11) <= boxWidth - 6
                ? sized : FlameGraph.fit(name, width: boxWidth - 6, size: 11)
            {
                element +=
                    "<text x=\"\(SVGDocument.number(x + 3))\" y=\"\(SVGDocument.number(y + Self.frameHeight - 5.5))\" font-size=\"11\" "
                    + "fill=\"#000000\">\(SVGDocument.escape(label))</text>"
            }
            return element + "</g>"
        }

        /// The function, its source locations and binary, its bytes and share of the graph, its blocks.
        func tooltip(_ node: Node) -> String {
            let share = Double(node.bytes) / Double(tree.bytes)
            var tooltip = node.name
            if !node.locations.isEmpty { tooltip += "\n" + node.locations.joined(separator: ", ") }
            if !node.moduleName.isEmpty { tooltip += "\n" + node.moduleName }
            tooltip +=
                "\n\(Units.formatBytes(node.bytes)) (\(Units.fixed(share * 100, decimals: 1))%)"
                + ", \(node.count) block\(node.count == 1 ? "" : "s")"
                + (node.selfBytes > 0 && !node.children.isEmpty
                    ? ", \(Units.formatBytes(node.selfBytes)) allocated here" : "")
            return tooltip
        }

        /// Says which boxes are left out, once they are all drawn.
        mutating func drawFootnote() {
            svg.text(
                "root at the bottom; boxes narrower than \(Units.fixed(minimumWidth, decimals: 1)) px are left out"
                    + (hidden > 0 ? " (\(hidden))" : ""), x: Self.left, y: height - 12, size: 10, fill: "#777777")
        }
    }

    /// `text` cut to fit `width` pixels at `size` (ending in `…`), nil when not even two characters fit.
    static func fit(_ text: String, width: Double, size: Double) -> String? {
        let capacity = Int(width / (size * 0.6))
        guard capacity >= 3 else { return nil }
        if text.count <= capacity { return text }
        return String(text.prefix(capacity - 1)) + "…"
    }

    enum Colours {
        /// Okabe–Ito orange: the user's code.
        static let user = "#E69F00"
        /// Okabe–Ito sky blue: library code.
        static let library = "#56B4E9"
        /// The root box (all stacks).
        static let root = "#BBBBBB"
    }

    /// One box: a function under a path of callers, with the bytes of all stacks through it.
    final class Node {
        let name: String
        var isLibrary: Bool
        var moduleName: String
        var locations: [String] = []
        var bytes = 0
        var count = 0
        /// Bytes of stacks that end here.
        var selfBytes = 0
        var children: [Node] = []
        private var childIndex: [String: Int] = [:]

        init(name: String, isLibrary: Bool, moduleName: String) {
            self.name = name
            self.isLibrary = isLibrary
            self.moduleName = moduleName
        }

        var depth: Int { 1 + (children.map(\.depth).max() ?? 0) }

        /// The tree of live stacks; siblings ordered by name (as flamegraph.pl does), so the layout is deterministic.
        static func build(_ profile: AllocationProfile) -> Node {
            let root = Node(name: "all", isLibrary: false, moduleName: "")
            for stack in profile.stacks where stack.peakLiveBytes > 0 {
                root.bytes += stack.peakLiveBytes
                root.count += stack.peakLiveCount
                var node = root
                for frame in profile.frames(of: stack) {
                    let child: Node
                    if let index = node.childIndex[frame.function] {
                        child = node.children[index]
                    } else {
                        child = Node(name: frame.function, isLibrary: frame.isLibrary, moduleName: frame.moduleName)
                        node.childIndex[frame.function] = node.children.count
                        node.children.append(child)
                    }
                    if let location = frame.shortLocation, !child.locations.contains(location) {
                        child.locations.append(location)
                    }
                    child.bytes += stack.peakLiveBytes
                    child.count += stack.peakLiveCount
                    node = child
                }
                node.selfBytes += stack.peakLiveBytes
            }
            root.sortChildren()
            return root
        }

        private func sortChildren() {
            children.sort { $0.name < $1.name }
            locations.sort()
            for child in children { child.sortChildren() }
        }
    }
}
