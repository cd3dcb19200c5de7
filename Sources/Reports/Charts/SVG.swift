import HarnessModel

/// A tiny SVG writer: elements as text, attributes escaped, numbers with fixed decimals (deterministic).
package struct SVGDocument {
    package let width: Double
    package let height: Double
    private var body: [String] = []

    package init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    package static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }

    package static func number(_ value: Double) -> String {
        Units.fixed(value, decimals: 1)
    }

    package mutating func raw(_ element: String) {
        body.append(element)
    }

    package mutating func rect(
        x: Double, y: Double, width: Double, height: Double, fill: String, opacity: Double = 1, stroke: String? = nil
    ) {
        var element =
            "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(max(width, 0)))\" "
            + "height=\"\(Self.number(max(height, 0)))\" fill=\"\(fill)\""
        if opacity < 1 { element += " fill-opacity=\"\(Units.fixed(opacity, decimals: 2))\"" }
        if let stroke { element += " stroke=\"\(stroke)\"" }
        body.append(element + "/>")
    }

    package mutating func line(
        x1: Double, y1: Double, x2: Double, y2: Double, stroke: String, width: Double = 1, dash: String? = nil
    ) {
        var element =
            "<line x1=\"\(Self.number(x1))\" y1=\"\(Self.number(y1))\" x2=\"\(Self.number(x2))\" "
            + "y2=\"\(Self.number(y2))\" stroke=\"\(stroke)\" stroke-width=\"\(Self.number(width))\""
        if let dash { element += " stroke-dasharray=\"\(dash)\"" }
        body.append(element + "/>")
    }

    package mutating func polyline(
        _ points: [(Double, Double)], stroke: String, width: Double = 1.5, dash: String? = nil, label: String? = nil
    ) {
        guard !points.isEmpty else { return }
        let coordinates = points.map { "\(Self.number($0.0)),\(Self.number($0.1))" }.joined(separator: " ")
        var element =
            "<polyline points=\"\(coordinates)\" fill=\"none\" stroke=\"\(stroke)\" "
            + "stroke-width=\"\(Self.number(width))\" stroke-linejoin=\"round\""
        if let dash { element += " stroke-dasharray=\"\(dash)\"" }
        if let label {
            body.append(element + "><title>\(Self.escape(label))</title></polyline>")
        } else {
            body.append(element + "/>")
        }
    }

    package mutating func circle(x: Double, y: Double, radius: Double, fill: String, stroke: String = "#ffffff") {
        body.append(
            "<circle cx=\"\(Self.number(x))\" cy=\"\(Self.number(y))\" r=\"\(Self.number(radius))\" "
                + "fill=\"\(fill)\" stroke=\"\(stroke)\" stroke-width=\"1\"/>"
        )
    }

    package enum Anchor: String { case start, middle, end }

    package mutating func text(
        _ content: String, x: Double, y: Double, size: Double = 12, anchor: Anchor = .start,
        fill: String = "#222222", weight: String? = nil, rotate: Double? = nil, halo: Bool = false
    ) {
        var element =
            "<text x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-size=\"\(Self.number(size))\" "
            + "text-anchor=\"\(anchor.rawValue)\" fill=\"\(fill)\""
        if let weight { element += " font-weight=\"\(weight)\"" }
        // A white outline under the glyphs keeps a label readable where it crosses a line.
        if halo { element += " stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\" stroke-linejoin=\"round\"" }
        if let rotate { element += " transform=\"rotate(\(Self.number(rotate)) \(Self.number(x)) \(Self.number(y)))\"" }
        body.append(element + ">\(Self.escape(content))</text>")
    }

    /// The finished document with its accessible title and description.
    package func render(title: String, description: String) -> String {
        var lines = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Self.number(width))\" "
                + "height=\"\(Self.number(height))\" viewBox=\"0 0 \(Self.number(width)) \(Self.number(height))\" "
                + "role=\"img\" aria-labelledby=\"title desc\" font-family=\"DejaVu Sans, Helvetica, Arial, "
                + "sans-serif\">",
            "<title id=\"title\">\(Self.escape(title))</title>",
            "<desc id=\"desc\">\(Self.escape(description))</desc>",
            "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>",
        ]
        lines += body
        lines.append("</svg>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Approximate rendered width of text in a sans-serif font, for layout without a font engine.
    package static func textWidth(_ text: String, size: Double) -> Double {
        Double(text.count) * size * 0.6
    }
}

/// Colours that stay apart for the common kinds of colour blindness (Okabe & Ito), darkest first.
package enum Palette {
    package static let colours = [
        "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
    ]

    package static func colour(_ index: Int) -> String {
        colours[index % colours.count]
    }
}
