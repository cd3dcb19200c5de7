import HarnessModel
import WorkloadKit
import Yams

/// The values of `specs` when nothing sets them: their defaults.
func defaultValues(of specs: [ParameterSpec]) -> ParameterValues {
    ParameterValues(Dictionary(uniqueKeysWithValues: specs.map { ($0.name, $0.defaultValue) }))
}

/// One reader per top-level key of a scenario file, in the order `ScenarioParser` calls them (the order of the
/// diagnostics follows it).
extension ParseContext {
    /// `description`, without the line break a folded YAML scalar ends with (the report adds its own spacing).
    mutating func readSummary(_ mapping: Node.Mapping) -> String {
        var summary = mapping["description"].flatMap { string($0, "description") } ?? ""
        while summary.last?.isNewline == true || summary.last == " " { summary.removeLast() }
        return summary
    }

    /// `parameters`: the workload's defaults, then the file's values.
    mutating func readScenarioParameters(_ mapping: Node.Mapping, descriptor: WorkloadDescriptor) -> ParameterValues {
        var parameters = defaultValues(of: descriptor.parameters)
        if let node = mapping["parameters"] {
            readParameters(
                node, specs: descriptor.parameters, into: &parameters, what: "of workload '\(descriptor.name)'")
        }
        return parameters
    }

    /// `strategies`: a list of names, or of mappings `{name: x, expect: leaks, parameters: {...}}`; every
    /// strategy of the workload when the key is absent.
    mutating func readStrategies(
        _ mapping: Node.Mapping, root: Node, descriptor: WorkloadDescriptor, parameters: ParameterValues
    ) -> [StrategyPlan] {
        let validStrategies = descriptor.strategies.map(\.name)
        guard let node = mapping["strategies"] else {
            return descriptor.strategies.map {
                StrategyPlan(name: $0.name, parameters: parameters, expect: nil, location: location(root))
            }
        }
        guard let sequence = node.sequence else {
            report(node, "'strategies' is a list, e.g. [\(validStrategies.prefix(2).joined(separator: ", "))]")
            return []
        }
        var strategies: [StrategyPlan] = []
        for item in sequence {
            guard let plan = readStrategy(item, descriptor: descriptor, base: parameters) else { continue }
            if strategies.contains(where: { $0.name == plan.name }) {
                report(item, "strategy '\(plan.name)' is listed twice")
            } else {
                strategies.append(plan)
            }
        }
        if strategies.isEmpty && diagnostics.isEmpty {
            report(node, "no strategies listed; expected some of: \(validStrategies.joined(separator: ", "))")
        }
        return strategies
    }

    /// `steps`: the workload's default steps when the key is absent; repeated phase names made unique.
    mutating func readSteps(_ mapping: Node.Mapping, descriptor: WorkloadDescriptor) -> [StepInvocation] {
        var steps: [StepInvocation] = []
        let stepDescriptors = descriptor.steps + BuiltInStep.all
        if let node = mapping["steps"] {
            if let sequence = node.sequence {
                for item in sequence {
                    if let step = readStep(item, descriptors: stepDescriptors) { steps.append(step) }
                }
            } else {
                report(node, "'steps' is a list, e.g. [\(descriptor.defaultSteps.joined(separator: ", "))]")
            }
        } else {
            for stepName in descriptor.defaultSteps {
                if let step = stepDescriptors.first(where: { $0.name == stepName }) {
                    steps.append(
                        StepInvocation(name: step.name, phase: step.name, arguments: defaultValues(of: step.arguments)))
                }
            }
        }
        return Self.uniquePhases(steps)
    }

    /// Gives repeated phase names a `#2`, `#3` suffix so per-phase peaks stay apart.
    static func uniquePhases(_ steps: [StepInvocation]) -> [StepInvocation] {
        var seen: [String: Int] = [:]
        return steps.map { step in
            var step = step
            let count = (seen[step.phase] ?? 0) + 1
            seen[step.phase] = count
            if count > 1 { step.phase += "#\(count)" }
            return step
        }
    }

    /// `peak: exact` or another `PeakMode`; nil when absent or invalid (reported).
    mutating func readPeakMode(_ mapping: Node.Mapping) -> PeakMode? { readChoice(mapping, "peak") }

    /// A key whose value is one of `Choice`'s names (`peak:`, a command strategy's `allocator:`); nil when absent or
    /// invalid (reported with the valid choices).
    mutating func readChoice<Choice: RawRepresentable & CaseIterable>(_ mapping: Node.Mapping, _ key: String) -> Choice?
    where Choice.RawValue == String {
        guard let node = mapping[key], let text = string(node, key) else { return nil }
        if let choice = Choice(rawValue: text) { return choice }
        let choices = Choice.allCases.map(\.rawValue)
        report(
            node,
            "bad value '\(text)' for '\(key)'; expected one of: \(choices.joined(separator: ", "))"
                + suggestion(text, choices))
        return nil
    }
}
