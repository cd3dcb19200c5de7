import Foundation
import HarnessModel
import WorkloadKit
import Yams

/// Scenarios whose strategies are external programs (`workload: command`): each strategy is a command
/// line, with `{name}` placeholders filled from the scenario's parameters (free text, kept as written),
/// run with the memharness agent preloaded. Two builds or two implementations are ranked and gated like
/// any scenario.
///
/// ```yaml
/// scenario: json-parsers
/// workload: command
/// parameters: {documents: "20000"}
/// strategies:
///   - name: foundation
///     command: ./bin/parse --decoder foundation --count {documents}
///   - name: streaming
///     command: [./bin/parse, --decoder, streaming, --count, "{documents}"]
/// ```
///
/// (Block style: in YAML's flow style, `{...}`, a placeholder's braces end the mapping early.)
public enum CommandScenario {
    /// The name `workload:` takes.
    public static let workloadName = "command"
    /// Its one step: run the command until it exits.
    public static let runStep = StepDescriptor("run", "Run the strategy's command until it exits.")

    /// The keys a command strategy may have.
    static let strategyKeys =
        ["name", "command", "expect", "parameters", "directory", "allocator"] + ServerScenario.strategyKeys

    /// A descriptor made from the file: its parameters as free text, its strategies by name.
    static func descriptor(_ mapping: Node.Mapping, context: inout ParseContext) -> WorkloadDescriptor {
        var parameters: [ParameterSpec] = []
        if let node = mapping["parameters"], let entries = node.mapping {
            for (key, value) in entries {
                guard let name = key.string, let text = value.string else { continue }
                parameters.append(.text(name, default: text, "a parameter of the scenario"))
            }
        }
        let names = (mapping["strategies"]?.sequence ?? []).compactMap { item in
            item.mapping?["name"]?.string
        }
        return WorkloadDescriptor(
            name: workloadName, summary: "external programs, one command line per strategy",
            strategies: names.map { StrategyDescriptor($0, "a command") }, parameters: parameters,
            steps: [runStep], defaultSteps: [runStep.name])
    }
}

extension ParseContext {
    /// Reads a command strategy's `command:` (a string split on spaces, or a list of words) and its
    /// `directory:`; checks its placeholders name parameters and its program can run with the agent.
    mutating func readCommand(_ mapping: Node.Mapping, parameters: [String]) -> ProgramInvocation? {
        guard let node = mapping["command"] else {
            report(
                mapping["name"],
                "a strategy of a command scenario needs 'command', e.g. command: ./bin/tool --size {size}")
            return nil
        }
        let words: [String]
        if let sequence = node.sequence {
            words = sequence.compactMap { $0.string }
        } else if let text = node.string {
            words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        } else {
            words = []
        }
        guard let program = words.first, !program.isEmpty else {
            report(node, "'command' is a command line (a string or a list of words), e.g. ./bin/tool --size {size}")
            return nil
        }
        _ = checkPlaceholders(words, at: node, parameters: parameters)
        let directory = mapping["directory"]?.string
        do {
            let resolved = try ProgramCheck.resolve(program, workingDirectory: directory)
            return ProgramInvocation(
                executable: resolved, arguments: Array(words.dropFirst()), workingDirectory: directory)
        } catch {
            report(node, error.description)
            return nil
        }
    }
}

extension ParseContext {
    /// Reports every `{name}` of `words` that names none of `parameters`; true when there is none.
    mutating func checkPlaceholders(_ words: [String], at node: Node, parameters: [String]) -> Bool {
        var valid = true
        for word in words {
            for placeholder in CommandTemplate.placeholders(in: word) where !parameters.contains(placeholder) {
                report(
                    node,
                    "unknown parameter '{\(placeholder)}' in the command; the scenario's parameters: "
                        + (parameters.isEmpty
                            ? "none (declare them under 'parameters')" : parameters.joined(separator: ", "))
                        + suggestion(placeholder, parameters))
                valid = false
            }
        }
        return valid
    }
}

/// `{name}` placeholders in a command's words.
public enum CommandTemplate {
    /// The names of the placeholders in `word`, in order.
    public static func placeholders(in word: String) -> [String] {
        var names: [String] = []
        var rest = Substring(word)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// `program` with every `{name}` of its arguments that names one of `parameters` replaced by the parameter's text.
    /// Other braces are the program's own and stay as typed: `profile -- node -e "a.push({i})"` has no parameters, and
    /// a scenario file names only its parameters (any other `{name}` is refused when the file is read).
    public static func filled(_ program: ProgramInvocation, with parameters: ParameterValues) -> ProgramInvocation {
        let fill = { (word: String) in
            placeholders(in: word).reduce(word) { text, name in
                guard let value = parameters[name] else { return text }
                return text.replacingOccurrences(of: "{\(name)}", with: Self.text(value))
            }
        }
        var filled = program
        filled.arguments = program.arguments.map(fill)
        filled.server = program.server?.filled(fill)
        return filled
    }

    /// A parameter's value as a command line spells it.
    static func text(_ value: ParameterValue) -> String {
        if case .choice(let text) = value { return text }
        return value.description
    }
}

extension ScenarioSpec {
    /// A scenario that runs one external program as its one strategy (what `memharness profile` runs).
    public static func program(
        _ invocation: ProgramInvocation, name: String, repetitions: Int = 1, timeout: Duration = .seconds(600)
    ) -> ScenarioSpec {
        let strategy = URL(fileURLWithPath: invocation.executable).lastPathComponent
        let descriptor = WorkloadDescriptor(
            name: CommandScenario.workloadName, summary: "one external program",
            strategies: [StrategyDescriptor(strategy, invocation.commandLine)], parameters: [],
            steps: [CommandScenario.runStep], defaultSteps: [CommandScenario.runStep.name])
        var plan = StrategyPlan(
            name: strategy, parameters: ParameterValues(), expect: nil,
            location: SourceLocation(file: "command line", line: 1, column: 1))
        plan.program = invocation
        var spec = ScenarioSpec(
            name: name, file: "command line", summary: "`\(invocation.commandLine)`",
            workload: CommandScenario.workloadName,
            parameters: ParameterValues(), parameterOrder: [], strategies: [plan],
            steps: [
                StepInvocation(
                    name: CommandScenario.runStep.name, phase: CommandScenario.runStep.name,
                    arguments: ParameterValues())
            ],
            repetitions: .fixed(repetitions), interval: nil, timeout: timeout, settle: .zero)
        spec.inlineDescriptor = descriptor
        return spec
    }
}
