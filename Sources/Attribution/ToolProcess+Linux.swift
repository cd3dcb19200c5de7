import CSystem
import Foundation
import HarnessModel

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: tools are started and waited for with Linux's pidfd")
#endif

/// Runs a tool once with a bounded wait: input from a file, output to a file (no pipe can fill up
/// and stall either side), killed when the bound is hit.
enum ToolProcess {
    /// How long a killed tool is waited for: SIGKILL ends a process at once unless the kernel is stuck.
    /// Past it the tool is not reaped here; the parent-death signal and the process's exit still end it.
    static let killWaitNanoseconds: Int64 = 10_000_000_000

    static func run(executable: String, arguments: [String], input: String, timeout: Duration) throws(AttributionError)
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
        let pid = try spawn(
            executable, arguments, input: handles.input.fileDescriptor, output: handles.output.fileDescriptor,
            error: handles.error.fileDescriptor)
        let status = try waitBounded(pid, executable: executable, timeout: timeout)
        // Without its stderr the failure is reported with its status alone.
        let errorText = ((try? String(contentsOf: errorURL, encoding: .utf8)) ?? "")
            .split(separator: "\n").suffix(3).joined(separator: " | ")
        guard status.exited == 1, status.status == 0 else {
            let code = status.exited == 1 ? status.status : status.signal
            throw .toolFailed(executable: executable, status: code, stderr: errorText)
        }
        guard let data = try? Data(contentsOf: outputURL) else {  // handled: reported as unreadable output
            throw .toolOutputUnreadable(executable: executable, reason: "its output file could not be read")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Starts the tool in a process group of its own that dies with this thread (`memharness_spawn`).
    private static func spawn(_ executable: String, _ arguments: [String], input: Int32, output: Int32, error: Int32)
        throws(AttributionError) -> pid_t
    {
        // Copies made before the fork: the child may not allocate.
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = (argv + [nil]).withUnsafeBufferPointer { argvPointer in
            executable.withCString { path in
                var request = memharness_spawn_request(
                    path: path, argv: argvPointer.baseAddress, envp: UnsafePointer(environ), stdin_fd: input,
                    stdout_fd: output, stderr_fd: error, die_with_parent: 1, new_process_group: 1,
                    working_directory: nil)
                return memharness_spawn(&request, &pid)
            }
        }
        guard status == 0 else {
            throw .toolCouldNotStart(executable: executable, reason: String(cString: strerror(errno)))
        }
        // An interruption of the run kills registered groups; a full table only leaves the tool to the
        // parent-death signal when the run exits.
        _ = memharness_child_register(pid)
        return pid
    }

    /// Waits for the tool without polling (pidfd), at most `timeout`. When the bound is hit (or the wait
    /// itself fails), the tool and everything it started are killed and reaped (at most `killWaitNanoseconds`)
    /// and the error says so; the caller falls back to the next tool.
    private static func waitBounded(_ pid: pid_t, executable: String, timeout: Duration)
        throws(AttributionError) -> memharness_wait_result
    {
        defer { memharness_child_unregister(pid) }
        var result = memharness_wait_result()
        let waited = memharness_wait(pid, timeout.nanoseconds, &result)
        if waited == 1 { return result }
        let waitFailure = waited < 0 ? String(cString: strerror(errno)) : nil
        _ = memharness_kill_group(pid, SIGKILL)  // the group is this tool's own: nothing else is reached
        var killed = memharness_wait_result()
        _ = memharness_wait(pid, killWaitNanoseconds, &killed)  // bounded; see `killWaitNanoseconds`
        if let waitFailure {
            throw .toolFailed(executable: executable, status: -1, stderr: "could not wait for it: \(waitFailure)")
        }
        throw .toolTimedOut(executable: executable, after: timeout)
    }

    /// The first executable named `name` in `PATH`, nil when there is none.
    static func findInPath(_ name: String, environment: [String: String]) -> String? {
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
