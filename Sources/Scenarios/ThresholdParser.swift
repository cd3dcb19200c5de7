import HarnessModel
import WorkloadKit
import Yams

/// Reads the `thresholds:` block of a scenario file.
///
/// Two forms, mixable:
/// ```yaml
/// thresholds:
///   signal-next:                     # a strategy of the file, or `all`
///     peakAllocated: <= 32MiB
///     phases.burst.peakAllocated: <= 40MiB
///   relative:
///     - signal-next.peakAllocated <= 0.1 * unbounded-dispatch.peakAllocated
/// ```
/// or a list of expressions (`- signal-next.residue <= 256KiB`). Values are checked against the
/// median of the repetitions. A limit starting with `>` must be quoted (YAML reads `>` as a block).
extension ParseContext {
    mutating func readThresholds(_ node: Node, strategies: [String], phases: [String]) -> [Threshold] {
        var thresholds: [Threshold] = []
        let keys = strategies + ["all", "relative"]
        if let sequence = node.sequence {
            for item in sequence { thresholds += readExpression(item, strategies: strategies, phases: phases) }
            return thresholds
        }
        guard let mapping = node.mapping else {
            report(
                node,
                "'thresholds' is a mapping of strategy (or all, relative) to limits, or a list of expressions like 'signal-next.peakAllocated <= 32MiB'"
            )
            return []
        }
        for (key, value) in mapping {
            guard let name = key.string, keys.contains(name) else {
                report(
                    key,
                    "unknown threshold group '\(key.string ?? "?")'; expected one of: \(keys.joined(separator: ", "))"
                        + suggestion(key.string ?? "", keys))
                continue
            }
            if name == "relative" {
                guard let sequence = value.sequence else {
                    report(
                        value,
                        "'relative' is a list of expressions like 'signal-next.peakAllocated <= 0.1 * unbounded-dispatch.peakAllocated'"
                    )
                    continue
                }
                for item in sequence { thresholds += readExpression(item, strategies: strategies, phases: phases) }
                continue
            }
            guard let limits = value.mapping else {
                report(value, "limits of '\(name)' are a mapping of figure to limit, e.g. peakAllocated: <= 32MiB")
                continue
            }
            for (figureNode, limitNode) in limits {
                guard let figureName = figureNode.string, let limitText = string(limitNode, figureName) else {
                    continue
                }
                guard let figure = readFigure(figureName, at: figureNode, phases: phases) else { continue }
                for strategy in name == "all" ? strategies : [name] {
                    if let threshold = readLimit(
                        limitText, subject: FigureReference(strategy: strategy, figure: figure),
                        text: "\(strategy).\(figureName) \(limitText)", at: limitNode,
                        strategies: strategies, phases: phases)
                    {
                        thresholds.append(threshold)
                    }
                }
            }
        }
        return thresholds
    }

    private mutating func readExpression(_ node: Node, strategies: [String], phases: [String]) -> [Threshold] {
        guard let text = string(node, "thresholds") else { return [] }
        let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2 else {
            report(
                node,
                "a threshold is 'strategy.figure OP limit', e.g. 'signal-next.peakAllocated <= 32MiB'; got '\(text)'")
            return []
        }
        let targets: [String]
        let subjectText = parts[0]
        guard let (strategy, figureName) = splitReference(subjectText) else {
            report(node, "'\(subjectText)' is not 'strategy.figure', e.g. 'signal-next.peakAllocated'")
            return []
        }
        if strategy == "all" {
            targets = strategies
        } else if strategies.contains(strategy) {
            targets = [strategy]
        } else {
            report(
                node,
                "unknown strategy '\(strategy)' in threshold; expected one of: \((strategies + ["all"]).joined(separator: ", "))"
                    + suggestion(strategy, strategies))
            return []
        }
        guard let figure = readFigure(figureName, at: node, phases: phases) else { return [] }
        return targets.compactMap { target in
            readLimit(
                parts[1], subject: FigureReference(strategy: target, figure: figure),
                text: "\(target).\(figureName) \(parts[1])", at: node, strategies: strategies, phases: phases)
        }
    }

    private func splitReference(_ text: String) -> (String, String)? {
        guard let dot = text.firstIndex(of: ".") else { return nil }
        let strategy = String(text[..<dot])
        let figure = String(text[text.index(after: dot)...])
        return strategy.isEmpty || figure.isEmpty ? nil : (strategy, figure)
    }

    mutating func readFigure(_ name: String, at node: Node, phases: [String]) -> Figure? {
        if let figure = Figure.simpleNames[name] { return figure }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 3, parts[0] == "phases", parts[2] == "peakAllocated" {
            guard phases.contains(parts[1]) else {
                report(
                    node,
                    "unknown phase '\(parts[1])' in '\(name)'; phases: \(phases.joined(separator: ", "))"
                        + suggestion(parts[1], phases))
                return nil
            }
            return .phasePeakAllocated(parts[1])
        }
        if parts.count == 2, parts[0] == "metrics", !parts[1].isEmpty { return .metric(parts[1]) }
        let names = Figure.simpleNames.keys.sorted() + ["phases.<phase>.peakAllocated", "metrics.<name>"]
        report(
            node,
            "unknown figure '\(name)'; expected one of: \(names.joined(separator: ", "))"
                + suggestion(name, Array(Figure.simpleNames.keys)))
        return nil
    }

    /// Reads `OP value` or `OP [factor *] strategy.figure`.
    private mutating func readLimit(
        _ text: String, subject: FigureReference, text full: String, at node: Node,
        strategies: [String], phases: [String]
    ) -> Threshold? {
        let trimmed = text.trimmingSpaces()
        guard
            let comparison = Comparison.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count })
                .first(where: { trimmed.hasPrefix($0.rawValue) })
        else {
            report(
                node,
                "'\(trimmed)' needs a comparison first; expected one of: \(Comparison.allCases.map(\.rawValue).joined(separator: ", ")), e.g. '<= 32MiB'"
            )
            return nil
        }
        let rest = String(trimmed.dropFirst(comparison.rawValue.count)).trimmingSpaces()
        let location = self.location(node)
        func make(_ limit: Threshold.Limit) -> Threshold {
            Threshold(
                subject: subject, comparison: comparison, limit: limit, text: full,
                file: location.file, line: location.line, column: location.column)
        }
        // Relative: `[factor *] strategy.figure`.
        let factorParts = rest.split(separator: "*", maxSplits: 1).map { String($0).trimmingSpaces() }
        let referenceText = factorParts.count == 2 ? factorParts[1] : rest
        if let (strategy, figureName) = splitReference(referenceText),
            strategies.contains(strategy)
                || Double(referenceText) == nil && Units.parseBytes(referenceText) == nil
                    && Units.parseDurationNanoseconds(referenceText) == nil
        {
            guard strategies.contains(strategy) else {
                report(
                    node,
                    "unknown strategy '\(strategy)' in '\(rest)'; expected one of: \(strategies.joined(separator: ", "))"
                        + suggestion(strategy, strategies))
                return nil
            }
            guard let figure = readFigure(figureName, at: node, phases: phases) else { return nil }
            var factor = 1.0
            if factorParts.count == 2 {
                guard let value = Double(factorParts[0]), value >= 0 else {
                    report(
                        node,
                        "bad factor '\(factorParts[0])' in '\(rest)'; expected a number, e.g. '0.1 * unbounded-dispatch.peakAllocated'"
                    )
                    return nil
                }
                factor = value
            }
            return make(.relative(factor: factor, of: FigureReference(strategy: strategy, figure: figure)))
        }
        // Absolute: a value in the figure's unit.
        let value: Double?
        switch subject.figure {
        case .duration:
            value = Units.parseDurationNanoseconds(rest).map { Double($0) / 1e6 }
        case .metric:
            value = Double(rest) ?? Units.parseBytes(rest).map(Double.init)
        default:
            value = Units.parseBytes(rest).map(Double.init)
        }
        guard let value else {
            let expected: String
            switch subject.figure {
            case .duration: expected = "a duration, e.g. 2s"
            case .metric: expected = "a number"
            default: expected = "a size with a binary unit, e.g. 32MiB, 256KiB, or 0"
            }
            report(
                node,
                "bad limit '\(rest)' for \(subject.figure); expected \(expected), or a factor of another strategy's figure"
            )
            return nil
        }
        return make(.absolute(value))
    }
}

extension String {
    func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
