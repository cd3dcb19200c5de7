import ChildProcesses
import Foundation
import HarnessModel
import Measurement
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Runs each case in a child process: the harness executable with the hidden `_run-case` command.
///
/// The runner ↔ case protocol (docs: "The runner and its case processes"): the spec goes to the child
/// as a JSON file (`CaseSpec`), the outcome comes back as a JSON file (`CaseOutcome`), the sampler's
/// rows live in a shared file the child maps (so a case that times out or crashes keeps its samples),
/// and the child's stderr is kept for the failure message. Exit codes of the child: `CaseExitCode`.
public struct ProcessCaseLauncher: CaseLaunching {
    /// The harness executable that understands `_run-case`.
    public var executable: String
    /// The agent library preloaded into cases that need it (exact peaks, attribution); nil when there is none.
    public var agent: AgentPreload?
    /// Extra environment for children (e.g. `MALLOC_CONF`).
    public var environment: [String: String]
    /// A command the child runs under, e.g. `["valgrind", "--tool=massif"]` (looked up in `PATH`); empty: none.
    public var wrapper: [String] = []
    /// Arguments added after `_run-case`'s own, e.g. `--no-allocator-check`.
    public var childArguments: [String] = []

    public init(executable: String, agent: AgentPreload? = nil, environment: [String: String] = [:]) {
        self.executable = executable
        self.agent = agent
        self.environment = environment
    }

    /// Every case has a process of its own: cases may run side by side.
    public var runsCasesInTheirOwnProcess: Bool { true }

    /// The running binary's own path (`/proc/self/exe`).
    public static var currentExecutable: String {
        // /proc/self/exe always resolves on Linux; argv[0] is the fallback for a process that lost it (a chroot).
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// A launcher for the running harness, with the agent found beside it (or where
    /// `MEMHARNESS_AGENT_LIBRARY` says).
    public static func forCurrentBinary() -> ProcessCaseLauncher {
        let executable = currentExecutable
        return ProcessCaseLauncher(executable: executable, agent: AgentPreload.locate(besideExecutable: executable))
    }

    /// Why cases that need the agent (exact peaks, allocation stacks, external programs) cannot run; nil when they can.
    public var agentProblem: String? {
        agent == nil ? AgentPreload.missingDescription(besideExecutable: executable) : nil
    }

    /// The environment of the child that runs `spec`: the agent preloaded with its modes when the case
    /// needs it; nil when it needs the agent and there is none.
    public func childEnvironment(for spec: CaseSpec) -> [String: String]? {
        var variables = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        guard spec.needsAgent else { return variables }
        guard let agent else { return nil }
        let modes = agent.variables(
            exact: spec.peakMode == .exact, stackSampleBytes: spec.attribution?.sampleMeanBytes,
            heap: spec.heapGraph != nil, allocator: spec.allocator ?? .jemalloc)
        variables.merge(modes) { _, new in new }
        return variables
    }

    public func launch(_ spec: CaseSpec) -> CaseOutcome {
        let work: CaseWorkFolder
        do {
            work = try CaseWorkFolder(spec: spec)
        } catch {
            return .notMeasured(reason: "could not prepare the case: \(error.localizedDescription)")
        }
        defer { ScratchFolder.remove(work.root) }
        guard let childEnvironment = childEnvironment(for: spec) else {
            return .notMeasured(reason: agentProblem ?? "the case needs the agent")
        }
        let outcome =
            spec.program != nil
            ? ProgramCase(
                spec: spec, work: work, environment: childEnvironment,
                loadClient: LoadClient.locate(besideExecutable: executable)
            ).run()
            : runWorkloadCase(spec, work: work, environment: childEnvironment)
        guard spec.attribution != nil else { return outcome }
        return CaseAttribution.attach(to: outcome, recordFile: work.record(of: nil), label: spec.label)
    }

    /// Runs a workload's case in `_run-case` and reads what it left.
    func runWorkloadCase(_ spec: CaseSpec, work: CaseWorkFolder, environment: [String: String]) -> CaseOutcome {
        var arguments = [
            "_run-case", "--spec", work.spec, "--result", work.result, "--scratch", work.scratch, "--samples",
            work.samples,
        ]
        if spec.attribution != nil { arguments += ["--record", work.record(of: nil)] }
        arguments += childArguments
        let stderr = open(work.stderr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { if stderr >= 0 { close(stderr) } }
        do {
            let child = try ChildProcess.spawn(
                path: wrapper.isEmpty ? executable : "/usr/bin/env",
                arguments: wrapper.isEmpty ? arguments : Array(wrapper.dropFirst(0)) + [executable] + arguments,
                environment: environment, stderr: stderr >= 0 ? stderr : nil)
            switch try child.wait(upTo: spec.timeoutNanoseconds) {
            case .ended(let end):
                return outcome(of: end.termination, spec: spec, work: work)
            case .timedOut:
                return .timedOut(
                    limitNanoseconds: spec.timeoutNanoseconds, measurements: work.partialMeasurements(spec))
            }
        } catch {
            return .notMeasured(reason: error.description)
        }
    }

    /// What the child's end, its result file, its samples and its stderr say.
    func outcome(of termination: TerminationStatus, spec: CaseSpec, work: CaseWorkFolder) -> CaseOutcome {
        let stderr = ChildOutput(path: work.stderr)
        switch termination {
        case .signaled(let signal):
            return .crashed(
                crash: CaseCrash(signal: signal, stderr: stderr), measurements: work.partialMeasurements(spec))
        case .exited(let status) where status == CaseExitCode.done || status == CaseExitCode.memoryLimit:
            do {
                return try JSONDecoder().decode(
                    CaseOutcome.self, from: Data(contentsOf: URL(fileURLWithPath: work.result)))
            } catch {
                return .notMeasured(reason: "the case wrote no readable result: \(error.localizedDescription)")
            }
        case .exited(let status):
            let detail = stderr.failureMessage
            return .notMeasured(reason: "exited with status \(status)" + (detail.isEmpty ? "" : ": \(detail)"))
        }
    }
}

/// Exit codes of the hidden `_run-case` child.
public enum CaseExitCode {
    /// The case ran (its result file says whether the workload failed).
    public static let done: Int32 = 0
    /// The harness could not measure (no jemalloc, bad spec); stderr says why.
    public static let harnessFailure: Int32 = 1
    /// The case was stopped by the memory limit; the result file says when and at what footprint.
    public static let memoryLimit: Int32 = 3
}

/// The files of one case process, in a folder of their own under the temporary directory.
struct CaseWorkFolder {
    let root: String
    var spec: String { "\(root)/spec.json" }
    var result: String { "\(root)/result.json" }
    var stderr: String { "\(root)/stderr.txt" }
    var samples: String { "\(root)/samples.bin" }
    var stdout: String { "\(root)/stdout.txt" }
    /// The agent's record; for an external program, the file of process `pid` (the agent names it by pid).
    func record(of pid: Int32?) -> String { "\(root)/record" + (pid.map { ".\($0)" } ?? ".txt") }
    /// The agent's sample stream of an external program's process `pid`.
    func programSamples(of pid: Int32) -> String { "\(root)/samples.\(pid)" }
    var scratch: String { "\(root)/scratch" }

    init(spec caseSpec: CaseSpec) throws {
        // Inside the run's folder, which its guard removes should the runner be killed.
        root = URL(fileURLWithPath: RunDirectory.current).appendingPathComponent("case-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        try JSONEncoder().encode(caseSpec).write(to: URL(fileURLWithPath: spec))
        guard FileManager.default.createFile(atPath: stderr, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: stderr])
        }
    }

    /// What the samples of a case that ended without a result show; nil when it left none.
    func partialMeasurements(_ spec: CaseSpec) -> CaseMeasurements? {
        let gaugeNames = (spec.gaugeNames ?? []) + (spec.memoryBudget?.warningBytes == nil ? [] : ["memoryWarnings"])
        guard let file = SampleBuffer.read(file: samples, phaseNames: spec.phaseNames, gaugeNames: gaugeNames),
            file.sampleCount > 0
        else { return nil }
        return CaseMeasurements(partialFrom: file, requestedIntervalNanoseconds: spec.samplingIntervalNanoseconds)
    }
}

/// A child's stderr, read for the reason it failed.
struct ChildOutput {
    /// The text, at most its last 64 KiB (a backtrace can be long; the message is near its start or end).
    let text: String

    init(text: String) { self.text = text }

    init(path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            text = ""
            return
        }
        defer { try? handle.close() }  // read-only: closing cannot lose anything
        // A failed seek or read leaves less text: only the failure's explanation is shortened, no figure is lost.
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: size > 65_536 ? size - 65_536 : 0)
        text = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
    }

    /// The last `count` non-empty lines, joined by newlines.
    func lastLines(_ count: Int) -> String {
        text.split(separator: "\n").suffix(count).joined(separator: "\n")
    }

    /// The Swift runtime's fatal-error line (`Fatal error: Index out of range at File.swift:12`) when
    /// there is one, else the last three lines the process printed itself (before the Swift runtime's crash
    /// report, whose tail is registers and images), else that report's summary (`Program crashed: Aborted`);
    /// empty when the child printed nothing.
    var failureMessage: String {
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let fatal = lines.first(where: { $0.contains("Fatal error") }) {
            return FatalErrorLine.readable(fatal)
        }
        // The backtracer's report starts with `*** Signal 6: Backtracing from 0x... done ***`.
        guard
            let report = lines.firstIndex(where: { $0.hasPrefix("*** Signal ") || $0.hasPrefix("*** Program crashed") })
        else { return lines.suffix(3).joined(separator: " | ") }
        // `swift-runtime: failed to suspend thread ...` and the like are the runtime's, not the process's.
        let own = lines[..<report].filter { !$0.hasPrefix("swift-runtime:") }.suffix(3)
        if !own.isEmpty { return own.joined(separator: " | ") }
        // `*** Program crashed: Aborted at 0x0000000000003e25 ***` → `Program crashed: Aborted`.
        guard let crashed = lines[report...].first(where: { $0.hasPrefix("*** Program crashed") }) else { return "" }
        let summary = crashed.dropFirst(4).replacingOccurrences(of: " ***", with: "")
        return summary.range(of: " at 0x").map { String(summary[..<$0.lowerBound]) } ?? summary
    }
}

/// The Swift runtime's fatal-error line, reordered to read as a message.
enum FatalErrorLine {
    /// `path/File.swift:12: Fatal error: Index out of range` → `Fatal error: Index out of range at File.swift:12`.
    static func readable(_ line: String) -> String {
        guard let range = line.range(of: "Fatal error") else { return line }
        let place = line[..<range.lowerBound].trimmingCharacters(in: CharacterSet(charactersIn: ": "))
        let message = String(line[range.lowerBound...])
        guard !place.isEmpty else { return message }
        let file = place.split(separator: "/").last.map(String.init) ?? place
        return "\(message) at \(file)"
    }
}

extension CaseCrash {
    /// A case process killed by `signal`, with the reason its stderr gives. memharness itself ends a case with
    /// SIGKILL only at its time limit (a timeout, not a crash), so a SIGKILL came from outside: say so.
    init(signal: Int32, stderr: ChildOutput) {
        var message = stderr.failureMessage
        if signal == SIGKILL {
            let outside = "not sent by memharness; the kernel's out-of-memory killer sends it when memory runs out"
            message = message.isEmpty ? outside : "\(outside) | \(message)"
        }
        self.init(signal: signal, signalName: SignalNames.name(of: signal), message: message)
    }
}

/// Signal names for messages.
public enum SignalNames {
    /// `SIGABRT` for 6; `signal 42` for one without a name here.
    public static func name(of signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
            SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV",
            SIGPIPE: "SIGPIPE", SIGTERM: "SIGTERM", SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ",
        ]
        return names[signal] ?? "signal \(signal)"
    }
}
