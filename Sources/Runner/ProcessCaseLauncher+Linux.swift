import Foundation
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
    /// The executable for exact-peak cases (one that counts every allocation); nil when there is none.
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

    /// A launcher for the running harness: sampled cases in this binary (or the uninstrumented one beside
    /// it), exact cases in the counting binary (this one, or the one beside it; nil when there is none).
    public static func forCurrentBinary(plainName: String = "memharness") -> ProcessCaseLauncher {
        let current = currentExecutable
        let directory = URL(fileURLWithPath: current).deletingLastPathComponent()
        func sibling(_ name: String) -> String? {
            let path = directory.appendingPathComponent(name).path
            return FileManager.default.isExecutableFile(atPath: path) ? path : nil
        }
        if ExactPeak.isAvailable {
            return ProcessCaseLauncher(executable: sibling(plainName) ?? current, exactExecutable: current)
        }
        return ProcessCaseLauncher(executable: current, exactExecutable: sibling(ExactPeak.executableName))
    }

    public var exactPeakProblem: String? {
        exactExecutable == nil
            ? "there is no \(ExactPeak.executableName) beside \(executable); \(ExactPeak.buildHint)" : nil
    }

    /// The executable that runs `spec`, or nil when it needs the counting one and there is none.
    public func executable(for spec: CaseSpec) -> String? {
        spec.peakMode == .exact ? exactExecutable : executable
    }

    public func launch(_ spec: CaseSpec) -> CaseOutcome {
        let work: CaseWorkFolder
        do {
            work = try CaseWorkFolder(spec: spec)
        } catch {
            return .notMeasured(reason: "could not prepare the case: \(error.localizedDescription)")
        }
        defer { ScratchFolder.remove(work.root) }
        guard let executable = executable(for: spec) else {
            return .notMeasured(reason: exactPeakProblem ?? "no executable for the case")
        }
        let arguments =
            [
                "_run-case", "--spec", work.spec, "--result", work.result, "--scratch", work.scratch,
                "--samples", work.samples,
            ] + childArguments
        let process = Process()
        process.executableURL = URL(fileURLWithPath: wrapper.isEmpty ? executable : "/usr/bin/env")
        process.arguments = wrapper.isEmpty ? arguments : wrapper + [executable] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let stderrHandle = FileHandle(forWritingAtPath: work.stderr)
        process.standardError = stderrHandle ?? FileHandle.nullDevice
        defer { try? stderrHandle?.close() }  // a write handle of a file read after the child ended
        let ended = ChildExit()
        process.terminationHandler = { _ in ended.signal() }
        do {
            try process.run()
        } catch {
            return .notMeasured(reason: "could not start \(executable): \(error.localizedDescription)")
        }
        let timedOut = !ended.wait(nanoseconds: spec.timeoutNanoseconds)
        if timedOut {
            kill(process.processIdentifier, SIGKILL)
            // SIGKILL cannot be ignored: the child is gone within milliseconds; 10 s covers a stalled kernel.
            _ = ended.wait(nanoseconds: 10_000_000_000)
        }
        return outcome(of: process, timedOut: timedOut, spec: spec, work: work)
    }

    /// What the child's end, its result file, its samples and its stderr say.
    func outcome(of process: Process, timedOut: Bool, spec: CaseSpec, work: CaseWorkFolder) -> CaseOutcome {
        let partial = { work.partialMeasurements(spec) }
        if timedOut { return .timedOut(limitNanoseconds: spec.timeoutNanoseconds, measurements: partial()) }
        let stderr = ChildOutput(path: work.stderr)
        if process.terminationReason == .uncaughtSignal {
            let signal = process.terminationStatus
            return .crashed(
                crash: CaseCrash(
                    signal: signal, signalName: SignalNames.name(of: signal), message: stderr.failureMessage),
                measurements: partial())
        }
        let status = process.terminationStatus
        if status == CaseExitCode.done || status == CaseExitCode.memoryLimit {
            do {
                return try JSONDecoder().decode(
                    CaseOutcome.self, from: Data(contentsOf: URL(fileURLWithPath: work.result)))
            } catch {
                return .notMeasured(reason: "the case wrote no readable result: \(error.localizedDescription)")
            }
        }
        let detail = stderr.failureMessage
        return .notMeasured(reason: "exited with status \(status)" + (detail.isEmpty ? "" : ": \(detail)"))
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

/// A child's end, waited for with a bound (no polling).
final class ChildExit: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func signal() { semaphore.signal() }

    /// True when the child ended within `nanoseconds`.
    func wait(nanoseconds: Int64) -> Bool {
        semaphore.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .success
    }
}

/// The files of one case process, in a folder of their own under the temporary directory.
struct CaseWorkFolder {
    let root: String
    var spec: String { "\(root)/spec.json" }
    var result: String { "\(root)/result.json" }
    var stderr: String { "\(root)/stderr.txt" }
    var samples: String { "\(root)/samples.bin" }
    var scratch: String { "\(root)/scratch" }

    init(spec caseSpec: CaseSpec) throws {
        root =
            FileManager.default.temporaryDirectory.appendingPathComponent("memharness-case-\(UUID().uuidString)").path
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

    init(path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            text = ""
            return
        }
        defer { try? handle.close() }  // read-only: closing cannot lose anything
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: size > 65_536 ? size - 65_536 : 0)
        text = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
    }

    /// The Swift runtime's fatal-error line (`Fatal error: Index out of range at File.swift:12`) when
    /// there is one, else the last three lines joined; empty when the child printed nothing.
    var failureMessage: String {
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let fatal = lines.first(where: { $0.contains("Fatal error") }) {
            return FatalErrorLine.readable(fatal)
        }
        return lines.suffix(3).joined(separator: " | ")
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
