import HarnessModel
import WorkloadKit
import Yams

extension ParseContext {
    /// Reads the nested `steps` of a `repeat` step and checks its counts against them.
    ///
    /// The body is a list of steps in the usual forms; a `repeat` inside a `repeat` is refused
    /// (the growth fit needs one settle and one reading per iteration of one loop).
    mutating func readRepeatBody(
        _ bodyNode: Node?, stepNode: Node, arguments: ParameterValues,
        descriptors: [StepDescriptor]
    ) -> [StepInvocation]? {
        let repeatName = BuiltInStep.repeat.name
        let bodyDescriptors = descriptors.filter { $0.name != repeatName }
        let example =
            "\(repeatName): {times: 20, warmup: 3, steps: "
            + "[\(bodyDescriptors.prefix(2).map(\.name).joined(separator: ", "))]}"
        guard let bodyNode else {
            report(stepNode, "step '\(repeatName)' needs the steps to repeat, e.g. \(example)")
            return nil
        }
        guard let sequence = bodyNode.sequence, !sequence.isEmpty else {
            report(bodyNode, "'steps' of '\(repeatName)' is a non-empty list of steps, e.g. \(example)")
            return nil
        }
        var body: [StepInvocation] = []
        var valid = true
        for item in sequence {
            if item.scalar?.string == repeatName || item.mapping?.first?.key.string == repeatName {
                report(item, "'\(repeatName)' cannot be nested inside '\(repeatName)'; flatten the loops into one body")
                valid = false
                continue
            }
            if let step = readStep(item, descriptors: bodyDescriptors) {
                body.append(step)
            } else {
                valid = false
            }
        }
        if let problem = Self.repeatCountProblem(arguments) {
            report(stepNode, problem)
            valid = false
        }
        return valid ? body : nil
    }

    /// Why a `repeat` step's `times` and `warmup` leave too few iterations to fit a growth line, if
    /// they do. Files and `--set` overrides (`repeat.times=3`) are held to the same rule.
    static func repeatCountProblem(_ arguments: ParameterValues) -> String? {
        let repeatName = BuiltInStep.repeat.name
        guard case .count(let times)? = arguments["times"], case .count(let warmup)? = arguments["warmup"] else {
            return nil
        }
        let minimum = BuiltInStep.minimumMeasuredIterations
        guard times - warmup < minimum else { return nil }
        return "'\(repeatName)' runs \(times) iterations with \(warmup) of warm-up, leaving "
            + "\(max(times - warmup, 0)) to fit the growth line; it needs at least \(minimum): raise 'times' to "
            + "\(warmup + minimum) or lower 'warmup'"
    }
}
