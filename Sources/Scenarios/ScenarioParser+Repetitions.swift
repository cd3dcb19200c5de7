import HarnessModel
import WorkloadKit
import Yams

extension ParseContext {
    /// The keys of `repetitions: {auto: true, target: 2%, min: 6, max: 15}`.
    static let adaptiveRepetitionKeys = ["auto", "target", "min", "max"]

    /// Reads `repetitions`: a whole number (fixed), `auto` (the defaults of `AdaptiveRepetitions`), or a
    /// mapping `{auto: true, target: 2%, min: 6, max: 15}` where every key may be left out. Absent: 3.
    mutating func readRepetitions(_ node: Node?) -> RepetitionPolicy {
        let fallback = RepetitionPolicy.fixed(3)
        guard let node else { return fallback }
        let shapes =
            "a whole number in \(OptionRanges.text(OptionRanges.repetitions)), `auto`, or a mapping such as "
            + "{auto: true, target: 2%, min: 6, max: 15}"
        if let mapping = node.mapping { return readAdaptiveRepetitions(mapping, node: node) ?? fallback }
        guard case .scalar(let scalar) = node else {
            report(node, "'repetitions' is \(shapes)")
            return fallback
        }
        let text = scalar.string
        if text == "auto" { return .auto(AdaptiveRepetitions()) }
        guard let count = Int(text) else {
            report(node, "bad value '\(text)' for 'repetitions'; expected \(shapes)" + suggestion(text, ["auto"]))
            return fallback
        }
        if let problem = OptionRanges.problem(
            count, in: OptionRanges.repetitions, allowed: OptionRanges.text(OptionRanges.repetitions) + ", or `auto`")
        {
            report(node, "'repetitions' " + problem)
            return fallback
        }
        return .fixed(count)
    }

    /// The mapping form; nil (with the problems reported) when a value is wrong.
    private mutating func readAdaptiveRepetitions(_ mapping: Node.Mapping, node: Node) -> RepetitionPolicy? {
        let problems = diagnostics.count
        checkKeys(mapping, allowed: Self.adaptiveRepetitionKeys, what: "repetitions key")
        var adaptive = AdaptiveRepetitions()
        if let autoNode = mapping["auto"], let text = string(autoNode, "repetitions.auto") {
            switch text.lowercased() {
            case "true", "yes", "on": break
            case "false", "no", "off":
                report(autoNode, "'auto: \(text)' asks for a fixed count: write it as 'repetitions: N' instead")
            default:
                report(autoNode, "bad value '\(text)' for 'repetitions.auto'; expected true")
            }
        }
        if let targetNode = mapping["target"], let text = string(targetNode, "repetitions.target") {
            let range = AdaptiveRepetitions.targetRange
            if let fraction = Units.parseFraction(text), range.contains(fraction) {
                adaptive.target = fraction
            } else {
                report(
                    targetNode,
                    "bad value '\(text)' for 'repetitions.target'; expected how far the 95% interval of the median "
                        + "may reach from it, from 0.1% to 50%, e.g. 2%")
            }
        }
        adaptive.minimum = readCount(mapping["min"], "min", default: adaptive.minimum)
        adaptive.maximum = readCount(mapping["max"], "max", default: adaptive.maximum)
        if adaptive.minimum > adaptive.maximum {
            let said = mapping["max"] == nil ? " (the default)" : ""
            report(
                mapping["min"] ?? mapping["max"] ?? node,
                "'repetitions.min' \(adaptive.minimum) is above 'repetitions.max' \(adaptive.maximum)\(said); "
                    + "raise 'max' or lower 'min'")
        }
        return diagnostics.count == problems ? .auto(adaptive) : nil
    }

    /// `min` or `max` of the mapping form: a whole number in 6...100.
    private mutating func readCount(_ node: Node?, _ key: String, default value: Int) -> Int {
        guard let node, let text = string(node, "repetitions.\(key)") else { return value }
        let range = AdaptiveRepetitions.countRange
        guard let count = Int(text), range.contains(count) else {
            report(
                node,
                "bad value '\(text)' for 'repetitions.\(key)'; expected a whole number in "
                    + "\(range.lowerBound)...\(range.upperBound) (a 95% interval of the median needs at least "
                    + "\(range.lowerBound) repetitions)")
            return value
        }
        return count
    }
}
