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
/// Every name is checked against the scenario (strategies, phases) and the workload (its declared
/// metrics), and every number must be a finite decimal, before any case runs.
extension ParseContext {
    /// The largest factor of a relative threshold: beyond it the limit is not a comparison but a typo.
    static let maximumThresholdFactor = 1_000_000.0

    mutating func readThresholds(_ node: Node, strategies: [String], phases: [String], metrics: [MetricDescriptor])
        -> [Threshold]
    {
        let names = ThresholdNames(strategies: strategies, phases: phases, metrics: metrics)
        var thresholds: [Threshold] = []
        let keys = strategies + ["all", "relative"]
        if let sequence = node.sequence {
            for item in sequence { thresholds += readExpression(item, names) }
            return thresholds
        }
        guard let mapping = node.mapping else {
            report(
                node,
                "'thresholds' is a mapping of strategy (or all, relative) to limits, or a list of expressions like "
                    + "'signal-next.peakAllocated <= 32MiB'"
            )
            return []
        }
        for (key, value) in mapping {
            guard let name = key.string, keys.contains(name) else {
                report(
                    key,
                    "unknown threshold group '\(Excerpt.of(key.string ?? "?"))'; expected one of: "
                        + "\(keys.joined(separator: ", "))"
                        + suggestion(key.string ?? "", keys))
                continue
            }
            if name == "relative" {
                guard let sequence = value.sequence else {
                    report(
                        value,
                        "'relative' is a list of expressions like 'signal-next.peakAllocated <= 0.1 * "
                            + "unbounded-dispatch.peakAllocated'"
                    )
                    continue
                }
                for item in sequence { thresholds += readExpression(item, names) }
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
                guard let figure = readFigure(figureName, at: figureNode, names) else { continue }
                for strategy in name == "all" ? strategies : [name] {
                    if let threshold = readLimit(
                        limitText, subject: FigureReference(strategy: strategy, figure: figure),
                        text: "\(strategy).\(figureName) \(limitText)", at: limitNode, names)
                    {
                        thresholds.append(threshold)
                    }
                }
            }
        }
        return thresholds
    }

    private mutating func readExpression(_ node: Node, _ names: ThresholdNames) -> [Threshold] {
        let strategies = names.strategies
        guard let text = string(node, "thresholds") else { return [] }
        let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2 else {
            report(
                node,
                "a threshold is 'strategy.figure OP limit', e.g. 'signal-next.peakAllocated <= 32MiB'; got "
                    + "'\(Excerpt.of(text))'"
            )
            return []
        }
        let targets: [String]
        let subjectText = parts[0]
        guard let (strategy, figureName) = Self.splitReference(subjectText) else {
            report(node, "'\(Excerpt.of(subjectText))' is not 'strategy.figure', e.g. 'signal-next.peakAllocated'")
            return []
        }
        if strategy == "all" {
            targets = strategies
        } else if strategies.contains(strategy) {
            targets = [strategy]
        } else {
            report(
                node,
                "unknown strategy '\(Excerpt.of(strategy))' in threshold; expected one of: "
                    + "\((strategies + ["all"]).joined(separator: ", "))"
                    + suggestion(strategy, strategies))
            return []
        }
        guard let figure = readFigure(figureName, at: node, names) else { return [] }
        return targets.compactMap { target in
            readLimit(
                parts[1], subject: FigureReference(strategy: target, figure: figure),
                text: "\(target).\(figureName) \(parts[1])", at: node, names)
        }
    }

    static func splitReference(_ text: String) -> (String, String)? {
        guard let dot = text.firstIndex(of: ".") else { return nil }
        let strategy = String(text[..<dot])
        let figure = String(text[text.index(after: dot)...])
        return strategy.isEmpty || figure.isEmpty ? nil : (strategy, figure)
    }

    /// The figure `name` names (`Figure(name:)`, the one grammar), with its phase or metric one the scenario has.
    mutating func readFigure(_ name: String, at node: Node, _ names: ThresholdNames) -> Figure? {
        switch Figure(name: name) {
        case .phasePeakAllocated(let phase)? where !names.phases.contains(phase):
            report(
                node,
                "unknown phase '\(Excerpt.of(phase))' in '\(Excerpt.of(name))'; phases: "
                    + "\(names.phases.joined(separator: ", "))"
                    + suggestion(phase, names.phases))
            return nil
        case .metric(let metric)? where !names.metrics.contains { $0.name == metric }:
            let metrics = names.metrics.map(\.name)
            report(
                node,
                "unknown metric '\(Excerpt.of(metric))' in '\(Excerpt.of(name))'; "
                    + (metrics.isEmpty
                        ? "the workload declares no metrics"
                        : "the workload's metrics: \(metrics.joined(separator: ", "))" + suggestion(metric, metrics)))
            return nil
        case let figure?:
            return figure
        case nil:
            report(
                node,
                "unknown figure '\(Excerpt.of(name))'; expected one of: \(Figure.nameForms.joined(separator: ", "))"
                    + suggestion(name, Array(Figure.simpleNames.keys)))
            return nil
        }
    }

    /// Reads `OP value` or `OP [factor *] strategy.figure`.
    private mutating func readLimit(
        _ text: String, subject: FigureReference, text full: String, at node: Node, _ names: ThresholdNames
    ) -> Threshold? {
        let trimmed = text.trimmingSpaces()
        guard let comparison = readComparison(trimmed, at: node) else { return nil }
        let rest = String(trimmed.dropFirst(comparison.rawValue.count)).trimmingSpaces()
        let limit =
            if let relative = RelativeLimitText(rest, strategies: names.strategies) {
                readRelativeLimit(relative, at: node, names)
            } else {
                readAbsoluteLimit(rest, for: subject.figure, at: node)
            }
        guard let limit else { return nil }
        let location = self.location(node)
        return Threshold(
            subject: subject, comparison: comparison, limit: limit, text: full,
            file: location.file, line: location.line, column: location.column)
    }

    /// The comparison a limit starts with (the longest that matches: `<=` before `<`).
    private mutating func readComparison(_ trimmed: String, at node: Node) -> Comparison? {
        let longestFirst = Comparison.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count })
        if let comparison = longestFirst.first(where: { trimmed.hasPrefix($0.rawValue) }) { return comparison }
        report(
            node,
            "'\(Excerpt.of(trimmed))' needs a comparison first; expected one of: "
                + "\(Comparison.allCases.map(\.rawValue).joined(separator: ", ")), e.g. '<= 32MiB'")
        return nil
    }

    /// `[factor *] strategy.figure`, checked against the scenario's strategies and figures.
    private mutating func readRelativeLimit(_ relative: RelativeLimitText, at node: Node, _ names: ThresholdNames)
        -> Threshold.Limit?
    {
        let (rest, strategy, strategies) = (relative.text, relative.strategy, names.strategies)
        guard strategies.contains(strategy) else {
            report(
                node,
                "unknown strategy '\(Excerpt.of(strategy))' in '\(Excerpt.of(rest))'; "
                    + "expected one of: \(strategies.joined(separator: ", "))" + suggestion(strategy, strategies))
            return nil
        }
        guard let figure = readFigure(relative.figure, at: node, names) else { return nil }
        var factor = 1.0
        if let factorText = relative.factor {
            guard let value = Units.parseDecimal(factorText), (0...Self.maximumThresholdFactor).contains(value)
            else {
                report(
                    node,
                    "bad factor '\(Excerpt.of(factorText))' in '\(Excerpt.of(rest))'; expected a number from 0 to "
                        + "\(Int(Self.maximumThresholdFactor)), e.g. '0.1 * unbounded-dispatch.peakAllocated'")
                return nil
            }
            factor = value
        }
        return .relative(factor: factor, of: FigureReference(strategy: strategy, figure: figure))
    }

    /// A value in the figure's unit.
    private mutating func readAbsoluteLimit(_ rest: String, for figure: Figure, at node: Node) -> Threshold.Limit? {
        let value: Double? =
            switch figure {
            case .duration: Units.parseDurationNanoseconds(rest).map { Double($0) / 1e6 }
            case .metric: Units.parseDecimal(rest) ?? Units.parseBytes(rest).map(Double.init)
            default: Units.parseBytes(rest).map(Double.init)
            }
        if let value { return .absolute(value) }
        let expected =
            switch figure {
            case .duration: "a duration, e.g. 2s"
            case .metric: "a number"
            case .leakedObjects: "a whole number of objects, e.g. 0"
            default: "a size with a binary unit, e.g. 32MiB, 256KiB, or 0"
            }
        report(
            node,
            "bad limit '\(Excerpt.of(rest))' for \(figure); expected \(expected), "
                + "or a factor of another strategy's figure")
        return nil
    }
}

/// The text after a limit's comparison when it names another strategy's figure: `[factor *] strategy.figure`.
private struct RelativeLimitText {
    /// The whole text, for messages.
    let text: String
    let factor: String?
    let strategy: String
    let figure: String

    /// Nil when the text is a plain value: it is relative when it names a known strategy, or when it reads as
    /// `word.word` and as no number, size or duration (so a typo in a strategy's name is reported as such).
    init?(_ text: String, strategies: [String]) {
        let factorParts = text.split(separator: "*", maxSplits: 1).map { String($0).trimmingSpaces() }
        let referenceText = factorParts.count == 2 ? factorParts[1] : text
        guard let (strategy, figure) = ParseContext.splitReference(referenceText),
            strategies.contains(strategy)
                || Units.parseDecimal(referenceText) == nil && Units.parseBytes(referenceText) == nil
                    && Units.parseDurationNanoseconds(referenceText) == nil
        else { return nil }
        self.text = text
        factor = factorParts.count == 2 ? factorParts[0] : nil
        self.strategy = strategy
        self.figure = figure
    }
}

/// The names a threshold may use: the scenario's strategies and phases, the workload's metrics.
struct ThresholdNames {
    var strategies: [String]
    var phases: [String]
    var metrics: [MetricDescriptor]
}

extension String {
    func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
