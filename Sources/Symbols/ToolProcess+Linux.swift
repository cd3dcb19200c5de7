import ChildProcesses
import Foundation
import HarnessModel

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: tools are started and waited for with Linux's pidfd")
#endif

/// Runs a tool once with a bounded wait: input from a file, output to a file (no pipe can fill up
/// and stall either side), killed when the bound is hit.
package enum ToolProcess {
    package static func run(executable: String, arguments: [String], input: String, timeout: Duration)
        throws(SymbolsError)
        -> String
    {
        let fileManager = FileManager.default
        let directory = fileManager.temporaryDirectory.appendingPathComponent("memharness-tool-\(UUID().uuidString)")
        // A temporary folder that cannot be removed is left to the system's temporary-file cleaner.
        defer { try? fileManager.removeItem(at: directory) }
        let inputURL = directory.appendingPathComponent("input")
        let outputURL = directory.appendingPathComponent("output")
        let errorURL = directory.appendingPathComponent("stderr")
        let handles: (input: FileHandle, output: FileHandle, error: FileHandle)
        do {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(input.utf8).write(to: inputURL)
            _ = fileManager.createFile(atPath: outputURL.path, contents: nil)
            _ = fileManager.createFile(atPath: errorURL.path, contents: nil)
            handles = (
                try FileHandle(forReadingFrom: inputURL), try FileHandle(forWritingTo: outputURL),
                try FileHandle(forWritingTo: errorURL)
            )
        } catch {
            throw .toolCouldNotStart(executable: executable, reason: "could not prepare its files: \(error)")
        }
        defer {
            // The tool wrote through its own copies of these descriptors; closing ours loses nothing.
            try? handles.input.close()
            try? handles.output.close()
            try? handles.error.close()
        }
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(
                path: executable, arguments: arguments, environment: toolEnvironment,
                stdin: handles.input.fileDescriptor, stdout: handles.output.fileDescriptor,
                stderr: handles.error.fileDescriptor)
        } catch {
            throw .toolCouldNotStart(executable: executable, reason: error.reason)
        }
        let termination = try waitBounded(child, timeout: timeout)
        // Without its stderr the failure is reported with its status alone.
        let errorText = ((try? String(contentsOf: errorURL, encoding: .utf8)) ?? "")
            .split(separator: "\n").suffix(3).joined(separator: " | ")
        guard termination.isSuccess else {
            throw .toolFailed(executable: executable, termination: termination, stderr: errorText)
        }
        guard let data = try? Data(contentsOf: outputURL) else {  // handled: reported as unreadable output
            throw .toolOutputUnreadable(executable: executable, reason: "its output file could not be read")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Waits for the tool without polling, at most `timeout`. When the bound is hit (or the wait itself
    /// fails), the tool and everything it started have been killed and reaped, and the error says so; the
    /// caller falls back to the next tool.
    private static func waitBounded(_ child: ChildProcess, timeout: Duration) throws(SymbolsError)
        -> TerminationStatus
    {
        let waited: BoundedWait
        do {
            waited = try child.wait(upTo: timeout.nanoseconds)
        } catch {
            throw .toolCouldNotBeWaitedFor(executable: child.path, reason: error.reason)
        }
        switch waited {
        case .ended(let end): return end.termination
        case .timedOut: throw .toolTimedOut(executable: child.path, after: timeout)
        }
    }

    /// This process's environment without the agent's variables: a tool started from a case process (which names its
    /// own heap captures) must not load the agent, which would track, sample and capture the tool instead.
    static var toolEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" && !$0.key.hasPrefix("MEMHARNESS_AGENT_") }
    }

    /// The first executable named `name` in `PATH`, nil when there is none.
    package static func findInPath(_ name: String, environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// `name` in the directory of the `swift` found in `PATH` (symbolic links followed): the toolchain's own tools.
    static func findBesideSwift(_ name: String, environment: [String: String]) -> String? {
        guard let swift = findInPath("swift", environment: environment) else { return nil }
        let resolved = URL(fileURLWithPath: swift).resolvingSymlinksInPath()
        let candidate = resolved.deletingLastPathComponent().appendingPathComponent(name).path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }
}
