import HarnessModel
import WorkloadKit

/// Why scenario files (or `--set` overrides of them) cannot be run. Every case is a usage error:
/// the fix is in what the user wrote, and the message says where and how.
public enum ScenarioError: Error, CustomStringConvertible, Sendable {
    /// Problems found in scenario files; every problem of every file, each with file:line:column.
    case invalid([ScenarioDiagnostic])
    /// A scenario name or path on the command line that matches nothing.
    case unknownScenario(String, available: [String])
    /// A scenario file that cannot be read (missing, a directory, not UTF-8, too large).
    case unreadable(path: String, reason: String)
    /// A `--set` override that does not fit the scenarios.
    case invalidOverride(String, reason: String)

    public var description: String {
        switch self {
        case .invalid(let diagnostics):
            // At most ten lines: the first problems are the ones to fix, and a file of garbage must not flood the
            // terminal.
            guard diagnostics.count > Self.maximumLines else {
                return diagnostics.map(\.description).joined(separator: "\n")
            }
            let shown = diagnostics.prefix(Self.maximumLines - 1).map(\.description)
            return (shown + ["... and \(diagnostics.count - shown.count) more problems; fix these first"]).joined(
                separator: "\n")
        case .unknownScenario(let name, let available):
            return "no scenario file or name '\(name)'; expected a path to a .yaml file or one of: "
                + available.joined(separator: ", ") + suggestion(name, available)
        case .unreadable(let path, let reason):
            return "\(path): \(reason)"
        case .invalidOverride(let text, let reason):
            return "--set '\(Excerpt.of(text, maximumCharacters: 80))': \(reason)"
        }
    }

    /// The most lines a description takes.
    public static let maximumLines = 10
}
