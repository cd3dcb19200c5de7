import Foundation
import PackagePlugin

/// The plugin's own options, taken out of the arguments; the rest goes to the harness.
struct PluginInvocation {
    /// The product the agent library is built from.
    static let agentProduct = "memharness-agent"

    static let usage = """
        USAGE: swift package --allow-writing-to-package-directory memharness [SUBCOMMAND] [--product NAME] \
        [--configuration debug|release] [ARGS ...]

        Builds the package's harness executable (the executable product that depends on MemHarness) and the
        memharness-agent library, then runs `HARNESS SUBCOMMAND ARGS`. With `run` (the default subcommand), the
        scenarios are the package's Scenarios/ and the report goes to Reports/latest under the package, unless
        --scenarios-dir or --out say otherwise.

          --product NAME           The harness executable, when the package has several (or names it differently).
          --configuration MODE     debug or release (default: release).

        """

    /// `--product`, when given.
    var product: String?
    var configuration: PackageManager.BuildConfiguration = .release
    /// The harness's subcommand (`run` when none is given).
    var subcommand: String
    /// The arguments after the subcommand, in order.
    var arguments: [String]

    /// The subcommand the plugin adds defaults to, and runs when none is given. Any other word is passed
    /// through, so the harness itself names the valid subcommands.
    static let runSubcommand = "run"

    init(parsing arguments: [String]) throws(PluginUsageError) {
        var rest: [String] = []
        var index = arguments.startIndex
        // The value given as `--name=value`, else the next argument.
        func value(of option: String, inline: String?) throws(PluginUsageError) -> String {
            if let inline { return inline }
            let next = arguments.index(after: index)
            guard next < arguments.endIndex, !arguments[next].hasPrefix("-") else {
                throw .missingValue(option: option)
            }
            index = next
            return arguments[next]
        }
        while index < arguments.endIndex {
            let argument = arguments[index]
            let (name, inline) = Self.split(argument)
            switch name {
            case "--product":
                product = try value(of: name, inline: inline)
            case "--configuration", "-c":
                let mode = try value(of: name, inline: inline)
                switch mode {
                case "debug": configuration = .debug
                case "release": configuration = .release
                default: throw .badConfiguration(mode)
                }
            default:
                rest.append(argument)
            }
            index = arguments.index(after: index)
        }
        if let first = rest.first, !first.hasPrefix("-") {
            subcommand = first
            self.arguments = Array(rest.dropFirst())
        } else if rest.contains(where: { ["--help", "-h", "--version"].contains($0) }) {
            // The harness's own help or version: no subcommand in front of it.
            subcommand = ""
            self.arguments = rest
        } else {
            subcommand = Self.runSubcommand
            self.arguments = rest
        }
    }

    /// `--help` for the harness itself (the plugin's usage is printed before it).
    var wantsHelp: Bool { subcommand.isEmpty && arguments.contains { $0 == "--help" || $0 == "-h" } }

    /// What the harness executable is given: for `run`, the package's Scenarios/ and a report folder
    /// under the package unless the arguments name their own.
    func harnessArguments(packageDirectory: URL) -> [String] {
        guard subcommand == Self.runSubcommand else { return (subcommand.isEmpty ? [] : [subcommand]) + arguments }
        var defaults: [String] = []
        if !mentions("--scenarios-dir") {
            defaults += ["--scenarios-dir", packageDirectory.appendingPathComponent("Scenarios").path]
        }
        if !mentions("--out") {
            defaults += ["--out", packageDirectory.appendingPathComponent("Reports/latest").path]
        }
        return [subcommand] + defaults + arguments
    }

    private func mentions(_ option: String) -> Bool {
        arguments.contains { $0 == option || $0.hasPrefix(option + "=") }
    }

    /// `--name=value` as (`--name`, `value`); anything else as (itself, nil).
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}

/// What is wrong with the plugin's arguments or the package, and how to fix it.
enum PluginUsageError: Error, CustomStringConvertible {
    case missingValue(option: String)
    case badConfiguration(String)
    case noHarness(package: String, executables: [String])
    case severalHarnesses([String])
    case unknownProduct(String, harnesses: [String])
    case notExecutable(String, harnesses: [String])
    case notAHarness(String, harnesses: [String])

    var description: String {
        switch self {
        case .missingValue(let option):
            return "\(option) needs a value"
        case .badConfiguration(let mode):
            return "unknown configuration '\(mode)'; expected one of: debug, release"
        case .noHarness(let package, let executables):
            let found = executables.isEmpty ? "it has none" : "executable products: \(Self.list(executables))"
            return "package '\(package)' has no executable product that depends on MemHarness (\(found)); add one "
                + "whose main.swift is `MemHarness.main(workloads: [MyWorkload()])` (see memharness's "
                + "Examples/JSONCache), or name it with --product NAME"
        case .severalHarnesses(let names):
            return
                "several executable products depend on MemHarness: \(Self.list(names)); choose one with --product NAME"
        case .unknownProduct(let name, let harnesses):
            return "no product named '\(name)'\(Self.expected(harnesses))"
        case .notExecutable(let name, let harnesses):
            return "'\(name)' is not an executable product\(Self.expected(harnesses))"
        case .notAHarness(let name, let harnesses):
            return "the executable '\(name)' does not depend on MemHarness\(Self.expected(harnesses))"
        }
    }

    private static func list(_ names: [String]) -> String { names.joined(separator: ", ") }

    private static func expected(_ harnesses: [String]) -> String {
        harnesses.isEmpty
            ? "; the package has no executable product that depends on MemHarness"
            : "; expected one of: \(list(harnesses))"
    }
}
