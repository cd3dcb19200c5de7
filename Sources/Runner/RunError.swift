import Measurement
import Scenarios
import WorkloadKit

/// Why a run cannot start. Every case is found before the first case runs.
public enum RunError: Error, CustomStringConvertible, Sendable {
    /// A scenario file, name or `--set` override is wrong.
    case scenario(ScenarioError)
    /// Options that do not fit the scenarios (a memory warning without a limit, a budget with sampling off).
    case options([String])
    /// Exact peaks, allocation stacks or an external program need the agent, and there is none (`detail` says how to
    /// build it).
    case agentUnavailable(file: String, detail: String)
    /// `--resume`, and no interrupted run into `output` left a journal.
    case nothingToResume(output: String)
    /// `--resume`, and the interrupted run into `output` ran other cases (other files, options or overrides).
    case resumeMismatch(output: String, detail: String)
    /// The report folder (or an output file) cannot be written there; found before any case.
    case output(String)
    /// The baseline cannot be compared with this run (it covers none of its scenarios).
    case baseline(String)

    /// True when the fix is in what the user asked for (exit 64), not in the machine.
    public var isUsageError: Bool {
        switch self {
        case .scenario, .options, .output, .baseline, .nothingToResume, .resumeMismatch: return true
        case .agentUnavailable: return false
        }
    }

    public var description: String {
        switch self {
        case .scenario(let error): return error.description
        case .options(let problems): return problems.joined(separator: "\n")
        case .agentUnavailable(let file, let detail):
            return
                "\(file): exact peaks, allocation stacks and external programs need the memharness agent, but \(detail)"
        case .nothingToResume(let output):
            return "--resume: no interrupted run into \(output) to resume (it finished, or never started); "
                + "run without --resume"
        case .resumeMismatch(let output, let detail):
            return "--resume: the interrupted run into \(output) is not this run: \(detail). Resume with the "
                + "same scenarios, --set values and options, or run without --resume to start over"
        case .output(let problem), .baseline(let problem): return problem
        }
    }
}
