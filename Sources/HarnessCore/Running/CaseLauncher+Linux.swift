import Foundation
import HarnessModel

/// Runs a case in a child process: the same binary with the hidden `_run-case` subcommand.
///
/// The spec goes to the child as a JSON file and the result comes back as a JSON file; the
/// child's stderr is kept for the failure message. A child that crashes, exits with an error or
/// outlives the timeout becomes a non-`ok` `CaseResult`; the run goes on.
public struct CaseLauncher: Sendable {
    /// Path of the harness executable that understands `_run-case`.
    public var executable: String
    /// Path of the executable for exact-peak cases (`memharness-exact`, which counts every
    /// allocation); nil when there is none, and exact cases fail saying how to build it.
    public var exactExecutable: String?
    /// Extra environment for children (e.g. `MALLOC_CONF`).
    public var environment: [String: String]
    /// A command the child runs under, e.g. `["valgrind", "--tool=massif"]` (looked up in `PATH`); empty: none.
    public var wrapper: [String] = []
    /// Arguments added after `_run-case`'s own, e.g. `--no-allocator-check`.
    public var childArguments: [String] = []

    public init(executable: String, exactExecutable: String? = nil, environment: [String: String] = [:]) {
        self.executable = executable
        self.exactExecutable = exactExecutable
        self.environment = environment
    }

    /// The running binary's own path (`/proc/self/exe`).
    public static var currentExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// A launcher for the running harness: sampled cases in the uninstrumented binary (this one, or
    /// `memharness` beside it when this one is `memharness-exact`), exact cases in `memharness-exact`
    /// (this one, or the one beside it; nil when there is none).
    public static func forCurrentBinary(plainName: String = "memharness") -> CaseLauncher {
        let current = currentExecutable
        let directory = URL(fileURLWithPath: current).deletingLastPathComponent()
        let fileManager = FileManager.default
        func sibling(_ name: String) -> String? {
            let path = directory.appendingPathComponent(name).path
            return fileManager.isExecutableFile(atPath: path) ? path : nil
        }
        if ExactPeak.isAvailable {
            return CaseLauncher(executable: sibling(plainName) ?? current, exactExecutable: current)
        }
        return CaseLauncher(executable: current, exactExecutable: sibling(ExactPeak.executableName))
    }

    /// Why there is no exact executable, for `HarnessError.exactPeakUnavailable`.
    public static func missingExactDetail(beside executable: String) -> String {
        "there is no \(ExactPeak.executableName) beside \(executable)"
    }

    /// The executable that runs `spec`, or nil when it needs `memharness-exact` and there is none.
    public func executable(for spec: CaseSpec) -> String? {
        spec.peakMode == .exact ? exactExecutable : executable
    }

    /// Runs `spec` in a child and returns its result (never throws: failures are results).
    public func run(_ spec: CaseSpec) -> CaseResult {
        let fileManager = FileManager.default
        let directory = fileManager.temporaryDirectory.appendingPathComponent("memharness-case-\(UUID().uuidString)")
        defer { try? fileManager.removeItem(at: directory) }
        let specURL = directory.appendingPathComponent("spec.json")
        let resultURL = directory.appendingPathComponent("result.json")
        let stderrURL = directory.appendingPathComponent("stderr.txt")
        let scratch = directory.appendingPathComponent("scratch")
        func failed(_ status: CaseStatus, _ reason: String) -> CaseResult {
            CaseResult(scenario: spec.scenario, workload: spec.workload, strategy: spec.strategy,
                       repetition: spec.repetition, status: status, failure: reason)
        }
        do {
            try fileManager.createDirectory(at: scratch, withIntermediateDirectories: true)
            try JSONEncoder().encode(spec).write(to: specURL)
            _ = fileManager.createFile(atPath: stderrURL.path, contents: nil)
        } catch {
            return failed(.failed, "could not prepare the case: \(error)")
        }

        guard let executable = executable(for: spec) else {
            return failed(.failed, HarnessError.exactPeakUnavailable(detail: Self.missingExactDetail(beside: self.executable)).description)
        }
        let process = Process()
        let arguments = ["_run-case", "--spec", specURL.path, "--result", resultURL.path, "--scratch", scratch.path] + childArguments
        if wrapper.isEmpty {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = wrapper + [executable] + arguments
        }
        var childEnvironment = ProcessInfo.processInfo.environment
        for (key, value) in environment { childEnvironment[key] = value }
        process.environment = childEnvironment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let stderrHandle = try? FileHandle(forWritingTo: stderrURL)
        process.standardError = stderrHandle ?? FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return failed(.failed, "could not start \(executable): \(error)")
        }
        let deadline = ContinuousClock.now + .nanoseconds(spec.timeoutNanoseconds)
        var timedOut = false
        while process.isRunning {
            if ContinuousClock.now > deadline {
                timedOut = true
                kill(process.processIdentifier, SIGKILL)
                break
            }
            usleep(2_000)
        }
        process.waitUntilExit()
        try? stderrHandle?.close()
        let stderrTail = Self.tail(of: stderrURL)

        if timedOut {
            return failed(.timedOut, "stopped after the \(Units.formatDuration(nanoseconds: spec.timeoutNanoseconds)) case timeout")
        }
        if process.terminationReason == .uncaughtSignal {
            let signal = process.terminationStatus
            return failed(.crashed, "killed by signal \(signal) (\(Self.signalName(signal)))" + (stderrTail.isEmpty ? "" : ": \(stderrTail)"))
        }
        if process.terminationStatus == CaseExitCode.memoryLimit, let result = try? Self.decode(resultURL) {
            return result
        }
        guard process.terminationStatus == 0 else {
            return failed(.failed, "exited with status \(process.terminationStatus)" + (stderrTail.isEmpty ? "" : ": \(stderrTail)"))
        }
        do {
            return try Self.decode(resultURL)
        } catch {
            return failed(.failed, "the case wrote no readable result: \(error)")
        }
    }

    private static func decode(_ url: URL) throws -> CaseResult {
        try JSONDecoder().decode(CaseResult.self, from: Data(contentsOf: url))
    }

    /// The last lines of a child's stderr, on one line.
    private static func tail(of url: URL) -> String {
        guard let data = try? Data(contentsOf: url), !data.isEmpty else { return "" }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").suffix(3)
        return lines.joined(separator: " | ").trimmingCharacters(in: .whitespaces)
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGABRT: return "SIGABRT"
        case SIGSEGV: return "SIGSEGV"
        case SIGILL: return "SIGILL"
        case SIGBUS: return "SIGBUS"
        case SIGKILL: return "SIGKILL"
        case SIGTERM: return "SIGTERM"
        case SIGTRAP: return "SIGTRAP"
        case SIGFPE: return "SIGFPE"
        default: return "signal \(signal)"
        }
    }
}

/// Exit codes of the hidden `_run-case` child.
public enum CaseExitCode {
    /// The case ran (its result file says whether the workload failed).
    public static let done: Int32 = 0
    /// The harness could not measure (no jemalloc, bad spec).
    public static let harnessFailure: Int32 = 1
    /// The case was stopped by the memory limit; the result file says when and at what footprint.
    public static let memoryLimit: Int32 = 3
}
