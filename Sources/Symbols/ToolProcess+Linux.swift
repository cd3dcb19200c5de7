import CSystem
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
        // Files with no name (input, output, standard error): nothing of them is left, whatever ends this process (a
        // case process killed at its timeout while a tool ran left a named folder behind).
        let files: (input: FileHandle, output: FileHandle, error: FileHandle)
        do {
            files = (try unnamedFile(), try unnamedFile(), try unnamedFile())
            try files.input.write(contentsOf: Data(input.utf8))
            try files.input.seek(toOffset: 0)
        } catch {
            throw .toolCouldNotStart(executable: executable, reason: "could not prepare its files: \(error)")
        }
        defer {
            // The tool wrote through its own copies of these descriptors; closing ours loses nothing.
            try? files.input.close()
            try? files.output.close()
            try? files.error.close()
        }
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(
                path: executable, arguments: arguments, environment: toolEnvironment,
                stdin: files.input.fileDescriptor, stdout: files.output.fileDescriptor,
                stderr: files.error.fileDescriptor)
        } catch {
            throw .toolCouldNotStart(executable: executable, reason: error.reason)
        }
        let termination = try waitBounded(child, timeout: timeout)
        // Without its stderr the failure is reported with its status alone.
        let errorText = String(decoding: (try? readAll(files.error)) ?? Data(), as: UTF8.self)
            .split(separator: "\n").suffix(3).joined(separator: " | ")
        guard termination.isSuccess else {
            throw .toolFailed(executable: executable, termination: termination, stderr: errorText)
        }
        guard let data = try? readAll(files.output) else {  // handled: reported as unreadable output
            throw .toolOutputUnreadable(executable: executable, reason: "its output file could not be read")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// A file with no name in the temporary folder, open for reading and writing.
    private static func unnamedFile() throws -> FileHandle {
        let descriptor = memharness_open_unnamed_file(FileManager.default.temporaryDirectory.path)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Everything written to `file`, from its start.
    private static func readAll(_ file: FileHandle) throws -> Data {
        try file.seek(toOffset: 0)
        return try file.readToEnd() ?? Data()
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
