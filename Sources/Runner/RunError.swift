import Measurement
import Scenarios
import WorkloadKit

/// Why a run cannot start. Every case is found before the first case runs.
public enum RunError: Error, CustomStringConvertible, Sendable {
    /// A scenario file, name or `--set` override is wrong.
    case scenario(ScenarioError)
    /// Options that do not fit the scenarios (a memory warning without a limit, a budget with sampling off).
    case options([String])
    /// Exact peaks were asked for, but the cases cannot count every allocation (`detail` says what is missing).
    case exactPeakUnavailable(file: String, detail: String)
    /// The report folder (or an output file) cannot be written there; found before any case.
    case output(String)
    /// The baseline cannot be compared with this run (it covers none of its scenarios).
    case baseline(String)

    /// True when the fix is in what the user asked for (exit 64), not in the machine.
    public var isUsageError: Bool {
        switch self {
        case .scenario, .options, .output, .baseline: return true
        case .exactPeakUnavailable: return false
        }
    }

    public var description: String {
        switch self {
        case .scenario(let error): return error.description
        case .options(let problems): return problems.joined(separator: "\n")
        case .output(let problem), .baseline(let problem): return problem
        case .exactPeakUnavailable(let file, let detail):
            return "\(file): exact peaks (--peak exact, peak: exact) need every allocation counted, but \(detail)"
        }
    }
}
