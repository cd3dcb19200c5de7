import AllocatorProbe

/// Why the harness could not measure (findings such as leaks are results, not errors).
public enum HarnessError: Error, CustomStringConvertible, Sendable {
    /// Scenario files with problems; every problem found, each with file:line:column.
    case invalidScenario([ScenarioDiagnostic])
    /// A scenario name or path on the command line that matches nothing.
    case unknownScenario(String, available: [String])
    /// A `--set` override that does not fit the scenario.
    case invalidOverride(String, reason: String)
    /// A file could not be read or written.
    case io(path: String, reason: String)
    /// The allocator probe failed (jemalloc missing, not the process allocator).
    case probe(AllocatorProbeError)
    /// The child process of a case did not follow the protocol.
    case caseProtocol(String)
    /// An exact-peak case, but this binary does not count allocations or the counting binary is missing (`detail` says which).
    case exactPeakUnavailable(detail: String)

    /// True when the problem is in what the user asked for (exit code 64), not in the harness.
    public var isUsageError: Bool {
        switch self {
        case .invalidScenario, .unknownScenario, .invalidOverride: return true
        case .io, .probe, .caseProtocol, .exactPeakUnavailable: return false
        }
    }

    public var description: String {
        switch self {
        case let .invalidScenario(diagnostics):
            return diagnostics.map(\.description).joined(separator: "\n")
        case let .unknownScenario(name, available):
            return "no scenario file or name '\(name)'; expected a path to a .yaml file or one of: \(available.joined(separator: ", "))"
                + suggestion(name, available)
        case let .invalidOverride(text, reason):
            return "--set '\(text)': \(reason)"
        case let .io(path, reason):
            return "\(path): \(reason)"
        case let .probe(error):
            return error.description
        case let .caseProtocol(message):
            return message
        case let .exactPeakUnavailable(detail):
            return "exact peaks (--peak exact, peak: exact) need the \(ExactPeak.executableName) binary, which counts every allocation, "
                + "but \(detail); \(ExactPeak.buildHint)"
        }
    }
}
