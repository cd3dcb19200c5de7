import HarnessModel

/// Why a symbolizing tool (llvm-symbolizer, addr2line, swift-demangle) gave no answer.
///
/// None of these stops a caller: the next tool is asked, a frame no tool names becomes `module+0xoffset`, and the
/// error's text becomes a `SymbolDiagnostic`.
public enum SymbolsError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The tool could not be started.
    case toolCouldNotStart(executable: String, reason: String)
    /// The tool ran past its bound and was killed.
    case toolTimedOut(executable: String, after: Duration)
    /// Waiting for the tool failed; it was killed.
    case toolCouldNotBeWaitedFor(executable: String, reason: String)
    /// The tool exited with a failure status or was killed by a signal.
    case toolFailed(executable: String, termination: TerminationStatus, stderr: String)
    /// The tool printed something that is not its answer to the input.
    case toolOutputUnreadable(executable: String, reason: String)

    public var description: String {
        switch self {
        case .toolCouldNotStart(let executable, let reason):
            return
                "could not start \(executable): \(reason); install it, or point MEMHARNESS_LLVM_SYMBOLIZER / MEMHARNESS_ADDR2LINE / MEMHARNESS_SWIFT_DEMANGLE at it"
        case .toolTimedOut(let executable, let after):
            return
                "\(executable) did not finish within \(after) and was stopped; the next tool is tried, or frames are named module+0xoffset"
        case .toolCouldNotBeWaitedFor(let executable, let reason):
            return "could not wait for \(executable): \(reason); it was stopped, and the next tool is tried"
        case .toolFailed(let executable, let termination, let stderr):
            let ending: String
            switch termination {
            case .exited(let status): ending = "exited with status \(status)"
            case .signaled(let signal): ending = "was killed by signal \(signal)"
            }
            return "\(executable) \(ending)" + (stderr.isEmpty ? "" : ": \(stderr)")
        case .toolOutputUnreadable(let executable, let reason):
            return "\(executable) printed output that could not be read (\(reason)); is it the tool its name says?"
        }
    }
}

/// Something the caller should know about how addresses were named (a tool missing, a module without symbols).
public struct SymbolDiagnostic: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The binary concerned, nil when it concerns all.
    public var module: String?
    /// What happened and what to do about it.
    public var message: String

    public init(module: String?, message: String) {
        self.module = module
        self.message = message
    }

    public var description: String { module.map { "\($0): \(message)" } ?? message }
}
