import HarnessModel
import WorkloadKit

/// Applies `--set name=value` overrides: `name` is a parameter, `step.argument` a step's argument
/// (by phase name or step name). Every override must match something, and every value is held to
/// the checks a scenario file's value gets (its kind, its range, a `repeat` step's counts).
public func applyOverrides(_ overrides: [String], to scenarios: [ScenarioSpec], catalog: WorkloadCatalog)
    throws(ScenarioError) -> [ScenarioSpec]
{
    var scenarios = scenarios
    for text in overrides {
        let override = try Override(parsing: text)
        var matched = false
        var misses: [String] = []
        for index in scenarios.indices {
            guard
                let descriptor = scenarios[index].inlineDescriptor
                    ?? catalog.workload(named: scenarios[index].workload)?.descriptor
            else { continue }
            let applied =
                if let stepKey = override.stepKey {
                    try override.applyStepArgument(
                        of: stepKey, to: &scenarios[index], descriptor: descriptor, misses: &misses)
                } else {
                    try override.applyParameter(to: &scenarios[index], descriptor: descriptor, misses: &misses)
                }
            matched = matched || applied
        }
        if !matched {
            // One reason per scenario, but a run of many scenarios must not make a screenful of them.
            let shown = misses.prefix(3).joined(separator: "; ")
            let more = misses.count > 3 ? "; and \(misses.count - 3) more scenarios" : ""
            throw .invalidOverride(text, reason: misses.isEmpty ? "no scenario to apply it to" : shown + more)
        }
    }
    return scenarios
}

/// One `--set NAME=VALUE`, split: a parameter (`key` alone) or a step's argument (`stepKey.argument`).
private struct Override {
    let text: String
    let key: String
    let valueText: String
    /// The phase or step name of `STEP.ARGUMENT`; nil for a parameter.
    let stepKey: String?
    let argument: String

    init(parsing text: String) throws(ScenarioError) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .invalidOverride(text, reason: "expected NAME=VALUE, e.g. payloadSize=8KiB or burst.duration=2s")
        }
        let (key, valueText) = (parts[0], parts[1])
        let keyParts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard keyParts.count <= 2, !keyParts.contains(where: \.isEmpty) else {
            throw .invalidOverride(
                text, reason: "'\(Excerpt.of(key))' is neither a parameter nor STEP.ARGUMENT, e.g. burst.duration")
        }
        self.text = text
        self.key = key
        self.valueText = valueText
        stepKey = keyParts.count == 2 ? keyParts[0] : nil
        argument = keyParts[keyParts.count - 1]
    }

    /// Sets the parameter in the scenario and its strategies; false (with the reason in `misses`) when the
    /// workload has no such parameter.
    func applyParameter(to scenario: inout ScenarioSpec, descriptor: WorkloadDescriptor, misses: inout [String])
        throws(ScenarioError) -> Bool
    {
        guard let spec = descriptor.parameters.first(where: { $0.name == key }) else {
            let names = descriptor.parameters.map(\.name)
            misses.append(
                "\(scenario.name) has no parameter '\(Excerpt.of(key))'; parameters: \(names.joined(separator: ", "))"
                    + suggestion(key, names))
            return false
        }
        let value = try parse(spec)
        scenario.parameters[key] = value
        for strategy in scenario.strategies.indices {
            scenario.strategies[strategy].parameters[key] = value
        }
        return true
    }

    /// Sets the argument of every step whose phase or name is `stepKey`; false (with the reasons in `misses`)
    /// when none takes it.
    func applyStepArgument(
        of stepKey: String, to scenario: inout ScenarioSpec, descriptor: WorkloadDescriptor, misses: inout [String]
    ) throws(ScenarioError) -> Bool {
        let stepDescriptors = descriptor.steps + BuiltInStep.all
        var stepFound = false
        var matched = false
        for stepIndex in scenario.steps.indices {
            let step = scenario.steps[stepIndex]
            guard step.phase == stepKey || step.name == stepKey,
                let stepDescriptor = stepDescriptors.first(where: { $0.name == step.name })
            else { continue }
            stepFound = true
            guard let spec = stepDescriptor.arguments.first(where: { $0.name == argument }) else {
                let names = stepDescriptor.arguments.map(\.name)
                misses.append(
                    names.isEmpty
                        ? "step '\(step.name)' of \(scenario.name) takes no arguments"
                        : "step '\(step.name)' of \(scenario.name) has no argument '\(Excerpt.of(argument))'; "
                            + "arguments: " + names.joined(separator: ", ") + suggestion(argument, names))
                continue
            }
            scenario.steps[stepIndex].arguments[argument] = try parse(spec)
            if step.name == BuiltInStep.repeat.name,
                let problem = ParseContext.repeatCountProblem(scenario.steps[stepIndex].arguments)
            {
                throw .invalidOverride(text, reason: "\(scenario.file): \(problem)")
            }
            matched = true
        }
        if !stepFound {
            let phases = scenario.steps.map(\.phase)
            misses.append(
                "\(scenario.name) has no step '\(Excerpt.of(stepKey))'; steps: \(phases.joined(separator: ", "))"
                    + suggestion(stepKey, phases))
        }
        return matched
    }

    /// The value, held to the checks a scenario file's value gets.
    private func parse(_ spec: ParameterSpec) throws(ScenarioError) -> ParameterValue {
        switch spec.parse(valueText) {
        case .success(let value): return value
        case .failure(let failure): throw .invalidOverride(text, reason: failure.message(text: valueText, name: key))
        }
    }
}

/// One parameter or step argument run at several values: `--set burst.duration=1s,2s,4s`.
///
/// A sweep runs the whole scenario once per value (each point an ordinary run with that `--set`
/// override) and fits each strategy's median peak against the value, so a peak that grows with
/// the burst shows as a slope in bytes per second and a bounded one as a slope near zero.
public struct SweepSpec: Sendable, Hashable {
    /// What is swept, as `--set` spells it: `payloadSize` or `burst.duration`.
    public var key: String
    /// The values in the order given, as written.
    public var values: [String]

    /// The most values one sweep takes: each runs the whole scenario again.
    public static let maximumValues = 100

    /// Reads `NAME=V1,V2,...` (at least two values and at most `maximumValues`, none empty or repeated).
    public init(parsing text: String) throws(ScenarioError) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw .invalidOverride(text, reason: "expected NAME=V1,V2,..., e.g. burst.duration=1s,2s,4s")
        }
        let values = parts[1].split(separator: ",", omittingEmptySubsequences: false).map {
            String($0.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
        }
        guard values.count >= 2 else {
            throw .invalidOverride(
                text, reason: "a sweep needs at least two values separated by commas, e.g. \(parts[0])=1s,2s,4s")
        }
        guard values.count <= Self.maximumValues else {
            throw .invalidOverride(
                text,
                reason:
                    "a sweep of \(values.count) values; at most \(Self.maximumValues) (each value runs every case "
                    + "again)"
            )
        }
        if let empty = values.firstIndex(where: \.isEmpty) {
            throw .invalidOverride(text, reason: "value \(empty + 1) of the sweep is empty; remove the extra comma")
        }
        if let repeated = values.enumerated().first(where: { values[..<$0.offset].contains($0.element) })?.element {
            throw .invalidOverride(
                text, reason: "'\(Excerpt.of(repeated))' is listed twice; every point of a sweep needs its own value")
        }
        key = parts[0]
        self.values = values
    }

    /// True when `--set` text lists several values (`name=a,b`) and so asks for a sweep.
    public static func isSweep(_ text: String) -> Bool {
        text.split(separator: "=", maxSplits: 1).dropFirst().first?.contains(",") ?? false
    }

    /// The `--set` override of each point, in order: `burst.duration=1s`, `burst.duration=2s`, ...
    public var overrides: [String] { values.map { "\(key)=\($0)" } }
}

/// The value a scenario runs `key` at: a parameter (`payloadSize`) or a step argument
/// (`burst.duration`, by phase or step name, first match); nil when there is none.
///
/// Read after `applyOverrides`, it gives each sweep point its x in base units (`baseUnitValue`).
public func sweptValue(_ key: String, in scenario: ScenarioSpec) -> ParameterValue? {
    let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
    guard parts.count == 2 else { return scenario.parameters[key] }
    return scenario.steps.first { $0.phase == parts[0] || $0.name == parts[0] }?.arguments[parts[1]]
}
