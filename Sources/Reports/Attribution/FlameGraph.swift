import HarnessModel

/// A flame graph of the live set at the peak: one box per function on a stack, as wide as the
/// live bytes allocated below it, root at the bottom, the allocating function on top.
///
/// Readable without JavaScript: every box carries a `<title>` tooltip (function, source location,
/// bytes, share, blocks), labels are cut to fit their box, and the `<desc>` lists the top sites.
/// Colours (Okabe–Ito): the user's code orange, library code (standard library, Foundation, libc,
/// Dispatch) sky blue, the root grey.
public enum FlameGraph {
    /// Renders the flame graph of one profile; nil when nothing is live at the peak.
    /// - Parameters:
    ///   - title: what the graph shows, e.g. `live-query / unbounded-dispatch: live memory at the peak`.
    ///   - minimumWidth: boxes narrower than this many pixels are not drawn (their bytes stay in their parent's width).
    public static func render(
        _ profile: AllocationProfile, title: String, width: Double = 1200,
        minimumWidth: Double = 0.5
    ) -> String? {
        render(
            AttributionSection.flameFigure(
                title: title, tree: AttributionSection.peakTree(profile), column: 0,
                profile: profile), width: width, minimumWidth: minimumWidth)
    }

    /// Draws one column of a flame tree; nil when the column holds nothing.
    static func render(_ figure: FlameFigure, width: Double = 1200, minimumWidth: Double = 0.5) -> String? {
        let tree = figure.tree
        let column = figure.column
        guard tree.bytes[column][0] > 0 else { return nil }
        var graph = Layout(tree: tree, column: column, width: width, minimumWidth: minimumWidth)
        graph.drawHeading(figure.title)
        graph.draw(0, x: Layout.left, level: 0)
        graph.drawFootnote()
        return graph.svg.render(title: figure.title, description: figure.description)
    }

    /// Where the boxes go (root at the bottom, widths in proportion to bytes) and the document they are drawn into.
    private struct Layout {
        static let frameHeight = 18.0
        static let left = 10.0
        static let right = 10.0
        static let top = 78.0
        static let bottom = 34.0

        let tree: FlameTree
        let column: Int
        let minimumWidth: Double
        let height: Double
        /// Pixels per byte.
        let scale: Double
        /// The bottom of the root box.
        let baseline: Double
        var svg: SVGDocument
        /// Boxes not drawn for being narrower than `minimumWidth`.
        var hidden = 0

        init(tree: FlameTree, column: Int, width: Double, minimumWidth: Double) {
            self.tree = tree
            self.column = column
            self.minimumWidth = minimumWidth
            let plotWidth = width - Self.left - Self.right
            let depth = tree.depth(in: column)
            height = Self.top + Double(depth) * Self.frameHeight + Self.bottom
            scale = plotWidth / Double(tree.bytes[column][0])
            baseline = Self.top + Double(depth) * Self.frameHeight
            svg = SVGDocument(width: width, height: height)
        }

        func bytes(_ node: Int) -> Int { tree.bytes[column][node] }

        /// Title, subtitle and legend.
        mutating func drawHeading(_ title: String) {
            svg.text(title, x: Self.left, y: 22, size: 15, weight: "bold")
            let measured = tree.columns[column].measuredPeakNetBytes
            let subtitle =
                "\(ValueAxis.compactBytes(Double(bytes(0)))) sampled live above the baseline at the peak"
                + (measured > 0 ? " (measured: \(ValueAxis.compactBytes(Double(measured))))" : "")
                + " · one sample per \(ValueAxis.compactBytes(Double(tree.columns[column].sampleMeanBytes))) on average"
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
        mutating func draw(_ node: Int, x: Double, level: Int) {
            let boxWidth = Double(bytes(node)) * scale
            guard boxWidth >= minimumWidth else {
                hidden += 1
                return
            }
            let y = baseline - Double(level + 1) * Self.frameHeight
            svg.raw(box(node, x: x, y: y, width: boxWidth, level: level))
            var childX = x
            for child in tree.nodes[node].children where bytes(child) > 0 {
                draw(child, x: childX, level: level + 1)
                childX += Double(bytes(child)) * scale
            }
        }

        /// One box: its tooltip, its rectangle, and a label where one fits.
        func box(_ node: Int, x: Double, y: Double, width boxWidth: Double, level: Int) -> String {
            let colour = level == 0 ? Colours.root : (tree.nodes[node].isLibrary ? Colours.library : Colours.user)
            var element = "<g><title>\(SVGDocument.escape(tooltip(node)))</title>"
            element +=
                "<rect x=\"\(SVGDocument.number(x))\" y=\"\(SVGDocument.number(y))\" width=\"\(SVGDocument.number(boxWidth))\" "
                + "height=\"\(SVGDocument.number(Self.frameHeight - 1))\" fill=\"\(colour)\" stroke=\"#ffffff\" stroke-width=\"0.5\"/>"
            // The box's bytes beside its name where both fit; else the name, cut to fit.
            let name = level == 0 ? "all stacks" : tree.nodes[node].name
            let sized = "\(name) · \(ValueAxis.compactBytes(Double(bytes(node) / 1024 * 1024)))"
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
        func tooltip(_ node: Int) -> String {
            let share = Double(bytes(node)) / Double(bytes(0))
            let count = tree.counts[column][node]
            let selfBytes = tree.selfBytes[column][node]
            let locations = tree.locations(of: node, in: column)
            var tooltip = tree.nodes[node].name
            if !locations.isEmpty { tooltip += "\n" + locations.joined(separator: ", ") }
            if !tree.nodes[node].moduleName.isEmpty { tooltip += "\n" + tree.nodes[node].moduleName }
            let hasChildren = tree.nodes[node].children.contains { bytes($0) > 0 }
            tooltip +=
                "\n\(Units.formatBytes(bytes(node))) (\(Units.fixed(share * 100, decimals: 1))%)"
                + ", \(count) block\(count == 1 ? "" : "s")"
                + (selfBytes > 0 && hasChildren ? ", \(Units.formatBytes(selfBytes)) allocated here" : "")
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
}
