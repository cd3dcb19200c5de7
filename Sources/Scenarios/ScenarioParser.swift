import HarnessModel
import WorkloadKit
import Yams

/// Reads scenario files (YAML) into `ScenarioSpec`s, checking everything against the workload's
/// descriptor before any work: every problem is reported with file, line and column.
public struct ScenarioParser: Sendable {
    /// Top-level keys a scenario file may use.
    public static let topLevelKeys = [
        "scenario", "description", "workload", "parameters", "strategies", "steps",
        "repetitions", "interval", "timeout", "settle", "thresholds", "memoryLimit", "memoryWarning", "peak", "rank",
        "rate", "parallel", "attribution", "manual", "suppressions",
    ]

    public let catalog: WorkloadCatalog

    public init(catalog: WorkloadCatalog) {
        self.catalog = catalog
    }

    /// Parses one file's text. Throws `ScenarioError.invalid` with every problem found.
    public func parse(_ text: String, file: String) throws(ScenarioError) -> ScenarioSpec {
        var context = ParseContext(file: file)
        let spec = parse(text, context: &context)
        if let spec, context.diagnostics.isEmpty { return spec }
        throw .invalid(context.diagnostics)
    }

    private func parse(_ text: String, context: inout ParseContext) -> ScenarioSpec? {
        guard let root = Self.compose(text, context: &context) else { return nil }
        guard let mapping = root.mapping else {
            context.report(root, "a scenario file is a mapping with keys: \(Self.topLevelKeys.joined(separator: ", "))")
            return nil
        }
        context.checkKeys(mapping, allowed: Self.topLevelKeys, what: "key")

        let name = context.requiredString(mapping, "scenario")
        let summary = context.readSummary(mapping)
        guard let workloadName = context.requiredString(mapping, "workload"),
            let descriptor = descriptor(named: workloadName, in: mapping, context: &context)
        else { return nil }
        let parameters = context.readScenarioParameters(mapping, descriptor: descriptor)
        let strategies = context.readStrategies(mapping, root: root, descriptor: descriptor, parameters: parameters)
        let steps = context.readSteps(mapping, descriptor: descriptor)
        let thresholds =
            mapping["thresholds"].map {
                context.readThresholds(
                    $0, strategies: strategies.map(\.name),
                    phases: ["setup"] + steps.map(\.phase) + ["teardown"] + ServerPlan.phaseNames(of: strategies),
                    metrics: descriptor.metrics + ServerPlan.metricDescriptors(of: strategies)
                        + ResidentBreakdown.metricDescriptors(of: strategies))
            } ?? []

        let repetitions = context.readRepetitions(mapping["repetitions"])
        let interval = context.readDuration(mapping, "interval", range: OptionRanges.interval)
        let timeout = context.readDuration(mapping, "timeout", range: OptionRanges.timeout) ?? .seconds(120)
        let settle = context.readDuration(mapping, "settle", range: OptionRanges.settle) ?? .milliseconds(100)
        let memory = context.readMemoryBudget(mapping)
        let peakMode = context.readPeakMode(mapping)
        let ranking = mapping["rank"].flatMap { context.readRanking($0, descriptor: descriptor, steps: steps) }
        let parallel = context.readFlag(mapping, "parallel") ?? false
        let ratePhase = mapping["rate"].flatMap { context.readRatePhase($0, phases: steps.map(\.phase)) }
        let attribution = mapping["attribution"].flatMap { context.readAttribution($0) }
        let manual = context.readFlag(mapping, "manual") ?? false
        let suppressions = mapping["suppressions"].map { context.readSuppressionsFile($0) } ?? []
        guard let name, context.diagnostics.isEmpty else { return nil }
        var spec = ScenarioSpec(
            name: name, file: context.file, summary: summary, workload: descriptor.name,
            parameters: parameters, parameterOrder: descriptor.parameters.map(\.name),
            strategies: strategies, steps: steps, repetitions: repetitions,
            interval: interval, timeout: timeout, settle: settle, thresholds: thresholds,
            memoryLimitBytes: memory.limitBytes, memoryWarning: memory.warning, peakMode: peakMode,
            gaugeNames: descriptor.gauges.map(\.name)
        )
        spec.ranking = ranking ?? .peakAllocated
        spec.ratePhase = ratePhase
        spec.parallel = parallel
        spec.attribution = attribution
        spec.manual = manual
        spec.suppressions = suppressions
        spec.inlineDescriptor = descriptor.name == CommandScenario.workloadName ? descriptor : nil
        for (key, _) in mapping {
            if let name = key.string { spec.keyLocations[name] = context.location(key) }
        }
        return spec
    }

    /// The file's YAML tree, or nil with the problems reported; `expected` says what the file should be when it is
    /// empty (a scenario file by default).
    static func compose(_ text: String, context: inout ParseContext, expected: String? = nil) -> Node? {
        // Limits and exact places first: Yams' own errors are coarser, and composing an alias bomb hangs.
        let problems = YAMLPreflight.problems(in: text, file: context.file)
        guard problems.isEmpty else {
            context.diagnostics += problems
            return nil
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            context.diagnostics.append(Self.diagnostic(for: error, file: context.file))
            return nil
        } catch {
            context.report(nil, "cannot read YAML: \(error)")
            return nil
        }
        guard let root else {
            context.report(
                nil, expected ?? "a scenario file is a mapping with keys: \(Self.topLevelKeys.joined(separator: ", "))")
            return nil
        }
        return root
    }

    /// The descriptor of the file's `workload`: a catalog workload's, or a command scenario's built from the file.
    private func descriptor(named workloadName: String, in mapping: Node.Mapping, context: inout ParseContext)
        -> WorkloadDescriptor?
    {
        if workloadName == CommandScenario.workloadName {
            return CommandScenario.descriptor(mapping, context: &context)
        }
        if let workload = catalog.workload(named: workloadName) {
            return workload.descriptor
        }
        let names = catalog.names + [CommandScenario.workloadName]
        context.report(
            mapping["workload"],
            "unknown workload '\(workloadName)'; expected one of: \(names.joined(separator: ", "))"
                + suggestion(workloadName, names))
        return nil
    }

    /// A Yams error as one short line at its place. The preflight finds syntax errors first; what is
    /// left here (duplicate keys that are lists or mappings) must not echo the file, as Yams' text does.
    static func diagnostic(for error: YamlError, file: String) -> ScenarioDiagnostic {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _):
            let what = [context?.text, problem].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
            return ScenarioDiagnostic(
                SourceLocation(file: file, line: mark.line, column: mark.column), "invalid YAML: \(what)")
        case .composer(_, let problem, let mark, _):
            return ScenarioDiagnostic(
                SourceLocation(file: file, line: mark.line, column: mark.column), "invalid YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return ScenarioDiagnostic(
                SourceLocation(file: file, line: context.mark.line, column: context.mark.column),
                "duplicate key \(duplicates.map { "'\(Excerpt.of($0))'" }.joined(separator: ", ")); "
                    + "a key may appear once in a mapping")
        default:
            return ScenarioDiagnostic(
                SourceLocation(file: file, line: 1, column: 1),
                "invalid YAML: \(Excerpt.of("\(error)", maximumCharacters: 120))")
        }
    }
}

/// The state of one file's parse: its name and the problems found so far.
struct ParseContext {
    let file: String
    var diagnostics: [ScenarioDiagnostic] = []

    func location(_ node: Node?) -> SourceLocation {
        SourceLocation(file: file, line: node?.mark?.line ?? 1, column: node?.mark?.column ?? 1)
    }

    mutating func report(_ node: Node?, _ message: String) {
        diagnostics.append(ScenarioDiagnostic(location(node), message))
    }

    mutating func checkKeys(_ mapping: Node.Mapping, allowed: [String], what: String) {
        for key in mapping.keys {
            guard let name = key.string else {
                report(key, "\(what)s are words; expected one of: \(allowed.joined(separator: ", "))")
                continue
            }
            if !allowed.contains(name) {
                report(
                    key,
                    "unknown \(what) '\(name)'; expected one of: \(allowed.joined(separator: ", "))"
                        + suggestion(name, allowed))
            }
        }
    }

    mutating func string(_ node: Node, _ key: String) -> String? {
        guard case .scalar(let scalar) = node else {
            report(node, "'\(key)' takes a single value, not a list or mapping")
            return nil
        }
        return scalar.string
    }

    mutating func requiredString(_ mapping: Node.Mapping, _ key: String) -> String? {
        guard let node = mapping[key] else {
            diagnostics.append(ScenarioDiagnostic(location(Node.mapping(mapping)), "missing required key '\(key)'"))
            return nil
        }
        guard let value = string(node, key), !value.isEmpty else {
            if case .scalar = node { report(node, "'\(key)' must not be empty") }
            return nil
        }
        return value
    }

    /// `key: true` or `key: false`; nil when the key is absent or its value is neither (reported).
    mutating func readFlag(_ mapping: Node.Mapping, _ key: String) -> Bool? {
        guard let node = mapping[key], let text = string(node, key) else { return nil }
        switch text {
        case "true": return true
        case "false": return false
        default:
            report(node, "bad value '\(text)' for '\(key)'; expected true or false")
            return nil
        }
    }

    mutating func readDuration(_ mapping: Node.Mapping, _ key: String, range: ClosedRange<Duration>) -> Duration? {
        guard let node = mapping[key], let text = string(node, key) else { return nil }
        let spec = ParameterSpec.duration(key, default: range.lowerBound, range: range, "")
        switch spec.parse(text) {
        case .success(.duration(let nanoseconds)): return .nanoseconds(nanoseconds)
        case .failure(let failure): report(node, failure.message(text: text, name: key))
        default: break
        }
        return nil
    }

    mutating func readParameters(_ node: Node, specs: [ParameterSpec], into values: inout ParameterValues, what: String)
    {
        guard let mapping = node.mapping else {
            report(
                node,
                "parameters are a mapping of name: value; valid names: \(specs.map(\.name).joined(separator: ", "))")
            return
        }
        for (key, valueNode) in mapping {
            guard let name = key.string, let spec = specs.first(where: { $0.name == name }) else {
                let names = specs.map(\.name)
                report(
                    key,
                    "unknown parameter '\(key.string ?? "?")' \(what); expected one of: "
                        + "\(names.joined(separator: ", "))"
                        + suggestion(key.string ?? "", names))
                continue
            }
            guard let text = string(valueNode, name) else { continue }
            switch spec.parse(text) {
            case .success(let value): values[name] = value
            case .failure(let failure): report(valueNode, failure.message(text: text, name: name))
            }
        }
    }

    mutating func readStrategy(_ node: Node, descriptor: WorkloadDescriptor, base: ParameterValues) -> StrategyPlan? {
        let valid = descriptor.strategies.map(\.name)
        func check(_ name: String, _ at: Node) -> Bool {
            guard valid.contains(name) else {
                report(
                    at,
                    "unknown strategy '\(name)'; expected one of: \(valid.joined(separator: ", "))"
                        + suggestion(name, valid))
                return false
            }
            return true
        }
        if case .scalar(let scalar) = node {
            guard descriptor.name != CommandScenario.workloadName else {
                report(node, "a strategy of a command scenario is a mapping with 'name' and 'command'")
                return nil
            }
            guard check(scalar.string, node) else { return nil }
            return StrategyPlan(name: scalar.string, parameters: base, expect: nil, location: location(node))
        }
        guard let mapping = node.mapping else {
            report(node, "a strategy is a name or a mapping with 'name', 'expect', 'parameters'")
            return nil
        }
        let isCommand = descriptor.name == CommandScenario.workloadName
        checkKeys(
            mapping, allowed: isCommand ? CommandScenario.strategyKeys : ["name", "expect", "parameters"],
            what: "strategy key")
        guard let name = requiredString(mapping, "name"), let nameNode = mapping["name"], check(name, nameNode) else {
            return nil
        }
        var parameters = base
        if let overrides = mapping["parameters"] {
            readParameters(
                overrides, specs: descriptor.parameters, into: &parameters, what: "of workload '\(descriptor.name)'")
        }
        var expect: String?
        if let expectNode = mapping["expect"], let text = string(expectNode, "expect") {
            let choices = ["leak-free", "leaks"]
            if choices.contains(text) {
                expect = text
            } else {
                report(
                    expectNode,
                    "unknown expectation '\(text)'; expected one of: \(choices.joined(separator: ", "))"
                        + suggestion(text, choices))
            }
        }
        var plan = StrategyPlan(name: name, parameters: parameters, expect: expect, location: location(nameNode))
        if isCommand {
            guard let program = readCommand(mapping, parameters: descriptor.parameters.map(\.name)) else { return nil }
            plan.program = program
            plan.program?.server = readServer(mapping, parameters: parameters)
            plan.allocator = readChoice(mapping, "allocator")
        }
        return plan
    }

    /// A step is `name`, `name: value` (sets the first argument) or `name: {argument: value, phase: label}`.
    mutating func readStep(_ node: Node, descriptors: [StepDescriptor]) -> StepInvocation? {
        let valid = descriptors.map(\.name)
        guard case (let name, let nameNode, let argumentsNode)? = stepParts(node, valid: valid) else { return nil }
        guard let descriptor = descriptors.first(where: { $0.name == name }) else {
            report(
                nameNode,
                "unknown step '\(name)'; expected one of: \(valid.joined(separator: ", "))" + suggestion(name, valid))
            return nil
        }
        var step = StepArguments(arguments: defaultValues(of: descriptor.arguments), phase: name)
        if let argumentsNode {
            if case .scalar(let scalar) = argumentsNode, !scalar.string.isEmpty {
                guard let first = descriptor.arguments.first else {
                    report(argumentsNode, "step '\(name)' takes no arguments")
                    return nil
                }
                switch first.parse(scalar.string) {
                case .success(let value): step.arguments[first.name] = value
                case .failure(let failure):
                    report(argumentsNode, failure.message(text: scalar.string, name: "\(name).\(first.name)"))
                }
            } else if let mapping = argumentsNode.mapping {
                readStepArguments(mapping, of: descriptor, into: &step)
            } else if case .scalar = argumentsNode {
                // `name:` with nothing after it: the step with its defaults.
            } else {
                report(argumentsNode, "arguments of step '\(name)' are a value or a mapping")
            }
        }
        if name == BuiltInStep.repeat.name {
            guard
                let body = readRepeatBody(
                    step.bodyNode, stepNode: node, arguments: step.arguments, descriptors: descriptors)
            else { return nil }
            return StepInvocation(name: name, phase: step.phase, arguments: step.arguments, body: body)
        }
        return StepInvocation(name: name, phase: step.phase, arguments: step.arguments)
    }

    /// What a step's mapping sets: its arguments, its phase label and (for `repeat`) the steps to repeat.
    struct StepArguments {
        var arguments: ParameterValues
        var phase: String
        var bodyNode: Node?
    }

    /// A step's name, the node to report it at and the node of its arguments, if the step has one of the
    /// three forms.
    private mutating func stepParts(_ node: Node, valid: [String]) -> (String, Node, Node?)? {
        if case .scalar(let scalar) = node {
            return (scalar.string, node, nil)
        }
        if let mapping = node.mapping, mapping.count == 1, let first = mapping.first, let key = first.key.string {
            return (key, first.key, first.value)
        }
        report(
            node,
            "a step is a name, 'name: value' or 'name: {argument: value}'; steps: \(valid.joined(separator: ", "))")
        return nil
    }

    /// `name: {argument: value, phase: label}` (and `steps: [...]` for `repeat`).
    private mutating func readStepArguments(
        _ mapping: Node.Mapping, of descriptor: StepDescriptor, into step: inout StepArguments
    ) {
        let name = descriptor.name
        let isRepeat = name == BuiltInStep.repeat.name
        let allowed = descriptor.arguments.map(\.name) + ["phase"] + (isRepeat ? ["steps"] : [])
        for (key, valueNode) in mapping {
            guard let argument = key.string else { continue }
            if argument == "phase" {
                if let text = string(valueNode, "phase") { step.phase = text }
                continue
            }
            if isRepeat && argument == "steps" {
                step.bodyNode = valueNode
                continue
            }
            guard let spec = descriptor.arguments.first(where: { $0.name == argument }) else {
                report(
                    key,
                    "unknown argument '\(argument)' of step '\(name)'; "
                        + "expected one of: \(allowed.joined(separator: ", "))" + suggestion(argument, allowed))
                continue
            }
            guard let text = string(valueNode, argument) else { continue }
            switch spec.parse(text) {
            case .success(let value): step.arguments[argument] = value
            case .failure(let failure):
                report(valueNode, failure.message(text: text, name: "\(name).\(argument)"))
            }
        }
    }
}
