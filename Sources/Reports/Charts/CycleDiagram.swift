import Foundation
import HarnessModel

/// A leaked cycle drawn as a small node-link graph: one box per block of the round trip (labelled with its
/// type), placed clockwise on a circle from the top in cycle order, and one arrow per reference labelled with
/// its field. Deterministic: the layout depends on the cycle's length and labels only.
public enum CycleDiagram {
    /// The diagram as an SVG document; `title` names it (e.g. "live-query · signal-next · cycle 1").
    public static func svg(for cycle: HeapCycle, title: String = "Leaked cycle") -> String {
        svg(HeapGraphSection.cycleFigure(cycle, title: title))
    }

    /// Draws `figure`: its blocks on a circle in cycle order, an arrow per reference.
    static func svg(_ figure: CycleFigure) -> String {
        let labels = figure.hops.map { fit($0.from) }
        let layout = Layout(labels: labels)
        var svg = SVGDocument(width: layout.width, height: layout.height)
        svg.raw(
            "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
                + "orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#444444\"/></marker></defs>")
        svg.text(figure.title, x: 12, y: 22, size: 15, weight: "bold")
        let omitted = figure.omittedHops > 0 ? ", \(figure.omittedHops) more references not drawn" : ""
        svg.text(
            "\(figure.memberBlocks) block\(figure.memberBlocks == 1 ? "" : "s"), "
                + "\(Units.formatBytes(figure.memberBytes)) leaked\(omitted)",
            x: 12, y: 40, size: 11, fill: "#555555")
        for (index, hop) in figure.hops.enumerated() {
            layout.drawEdge(from: index, to: (index + 1) % labels.count, label: hop.field, into: &svg)
        }
        for (index, hop) in figure.hops.enumerated() {
            layout.drawNode(index, label: labels[index], colour: Palette.colour(hop.kind), into: &svg)
        }
        let description =
            "Directed graph of a leaked cycle of \(figure.memberBlocks) blocks: "
            + figure.hops.map { "\($0.from).\($0.reference) references \($0.to)" }.joined(separator: ", ") + "."
        return svg.render(title: figure.title, description: description)
    }

    /// Type names are long (`OpenCombine.Subscribers.Sink<App.Profile, Swift.Never>`): the qualifiers go first
    /// (`Sink<Profile, Never>`; the Markdown beside the picture has the full names), then the start, keeping the end.
    static func fit(_ label: String, maximum: Int = 30) -> String {
        let short = unqualified(label)
        return short.count <= maximum ? short : "…" + String(short.suffix(maximum - 1))
    }

    /// `label` without the `Module.` and `Outer.` qualifiers of its type names.
    static func unqualified(_ label: String) -> String {
        var out = ""
        var word = ""
        for character in label {
            if character == ".", let first = word.first, first.isLetter || first == "_" {
                word = ""  // a qualifier: dropped with its dot
            } else if character.isLetter || character.isNumber || character == "_" {
                word.append(character)
            } else {
                out += word + String(character)
                word = ""
            }
        }
        return out + word
    }

    private struct Layout {
        static let boxHeight = 26.0
        static let top = 56.0
        let boxWidths: [Double]
        let radius: Double
        let width: Double
        let height: Double
        let centre: (x: Double, y: Double)

        init(labels: [String]) {
            boxWidths = labels.map { SVGDocument.textWidth($0, size: 12) + 20 }
            let widest = boxWidths.max() ?? 80
            let count = Double(labels.count)
            // One block sits alone with its loop above it; more share a circle wide enough for their boxes.
            radius = labels.count <= 1 ? 0 : min(max(90, (widest + 30) * count / (2 * Double.pi)), 420)
            width = max(2 * radius + widest + 60, 360)
            height = Self.top + 2 * radius + Self.boxHeight + (labels.count <= 1 ? 90 : 50)
            centre = (width / 2, Self.top + (labels.count <= 1 ? 70 : 20) + radius + Self.boxHeight / 2)
        }

        func position(_ index: Int) -> (x: Double, y: Double) {
            let angle = -Double.pi / 2 + 2 * Double.pi * Double(index) / Double(max(boxWidths.count, 1))
            return (centre.x + radius * cos(angle), centre.y + radius * sin(angle))
        }

        func drawNode(_ index: Int, label: String, colour: String, into svg: inout SVGDocument) {
            let (x, y) = position(index)
            let boxWidth = boxWidths[index]
            svg.raw(
                "<rect x=\"\(SVGDocument.number(x - boxWidth / 2))\" y=\"\(SVGDocument.number(y - Self.boxHeight / 2))\" "
                    + "width=\"\(SVGDocument.number(boxWidth))\" height=\"\(SVGDocument.number(Self.boxHeight))\" rx=\"5\" "
                    + "fill=\"#ffffff\" stroke=\"\(colour)\" stroke-width=\"2\"/>")
            svg.text(label, x: x, y: y + 4, size: 12, anchor: .middle)
        }

        /// Where the ray from a box's centre towards `toward` leaves the box (plus a small gap).
        func exit(_ index: Int, toward: (x: Double, y: Double)) -> (x: Double, y: Double) {
            let (x, y) = position(index)
            let (dx, dy) = (toward.x - x, toward.y - y)
            let halfWidth = boxWidths[index] / 2 + 4
            let halfHeight = Self.boxHeight / 2 + 4
            let scale = min(dx == 0 ? .infinity : halfWidth / abs(dx), dy == 0 ? .infinity : halfHeight / abs(dy))
            return (x + dx * min(scale, 1), y + dy * min(scale, 1))
        }

        func drawEdge(from: Int, to: Int, label: String, into svg: inout SVGDocument) {
            guard from != to else { return drawLoop(from, label: label, into: &svg) }
            let (start, end) = (position(from), position(to))
            let (dx, dy) = (end.x - start.x, end.y - start.y)
            // Bent to one side, so the two references between a pair of blocks do not lie on each other.
            let control = ((start.x + end.x) / 2 + dy * 0.2, (start.y + end.y) / 2 - dx * 0.2)
            let (p0, p2) = (exit(from, toward: control), exit(to, toward: control))
            svg.raw(
                "<path d=\"M \(SVGDocument.number(p0.x)) \(SVGDocument.number(p0.y)) Q \(SVGDocument.number(control.0)) "
                    + "\(SVGDocument.number(control.1)) \(SVGDocument.number(p2.x)) \(SVGDocument.number(p2.y))\" "
                    + "fill=\"none\" stroke=\"#444444\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"/>")
            let middle = ((p0.x + 2 * control.0 + p2.x) / 4, (p0.y + 2 * control.1 + p2.y) / 4)
            svg.text(label, x: middle.0, y: middle.1 + 4, size: 11, anchor: .middle, fill: "#8a1c1c", halo: true)
        }

        /// A block referencing itself: a loop over its box.
        func drawLoop(_ index: Int, label: String, into svg: inout SVGDocument) {
            let (x, y) = position(index)
            let top = y - Self.boxHeight / 2 - 3
            let n = SVGDocument.number
            svg.raw(
                "<path d=\"M \(n(x - 18)) \(n(top)) C \(n(x - 40)) \(n(top - 60)) \(n(x + 40)) \(n(top - 60)) "
                    + "\(n(x + 18)) \(n(top))\" fill=\"none\" stroke=\"#444444\" stroke-width=\"1.5\" "
                    + "marker-end=\"url(#arrow)\"/>")
            svg.text(label, x: x, y: top - 50, size: 11, anchor: .middle, fill: "#8a1c1c", halo: true)
        }
    }
}
