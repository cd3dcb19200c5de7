import Foundation

/// Runs a tool once with a bounded wait: input from a file, output to a file (no pipe can fill up
/// and stall either side), killed when the bound is hit.
enum ToolProcess {
    static func run(executable: String, arguments: [String], input: String, timeout: Duration) throws(AttributionError)
        -> String
    {
        let fileManager = FileManager.default
        let directory = fileManager.temporaryDirectory.appendingPathComponent("memharness-tool-\(UUID().uuidString)")
        defer { try? fileManager.removeItem(at: directory) }
        let inputURL = directory.appendingPathComponent("input")
        let outputURL = directory.appendingPathComponent("output")
        let errorURL = directory.appendingPathComponent("stderr")
        let process = Process()
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
            try? handles.input.close()
            try? handles.output.close()
            try? handles.error.close()
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = handles.input
        process.standardOutput = handles.output
        process.standardError = handles.error
        do {
            try process.run()
        } catch {
            throw .toolCouldNotStart(executable: executable, reason: "\(error)")
        }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                // Bound hit: kill the tool (only this child, by its pid) and report; the caller falls back.
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw .toolTimedOut(executable: executable, after: timeout)
            }
            usleep(1_000)
        }
        process.waitUntilExit()
        let errorText = ((try? String(contentsOf: errorURL, encoding: .utf8)) ?? "")
            .split(separator: "\n").suffix(3).joined(separator: " | ")
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw .toolFailed(executable: executable, status: process.terminationStatus, stderr: errorText)
        }
        guard let data = try? Data(contentsOf: outputURL) else {
            throw .toolOutputUnreadable(executable: executable, reason: "its output file could not be read")
        }
        return String(decoding: data, as: UTF8.self)
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
