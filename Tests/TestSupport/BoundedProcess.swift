import Foundation

/// How a child process run by `runBounded` ended, and what it printed.
public struct BoundedOutcome: Sendable {
    public var status: Int32
    /// True when the child outlived its time and was killed.
    public var timedOut: Bool
    public var stdout: String
    public var stderr: String
}

/// Runs `executable` with `arguments` and waits at most `timeout`; a child still running then is killed
/// with SIGKILL and the outcome says so. Output goes to files in `outputDirectory`, so a chatty child never
/// blocks on a pipe and a hung one never blocks a read. `environment` nil: this process's.
public func runBounded(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, outputDirectory: String,
    timeout: Duration
) throws -> BoundedOutcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let tag = UUID().uuidString
    let outPath = "\(outputDirectory)/stdout-\(tag)"
    let errPath = "\(outputDirectory)/stderr-\(tag)"
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    defer {
        try? out.close()
        try? err.close()
    }
    process.standardOutput = out
    process.standardError = err
    let finished = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in finished.signal() }
    try process.run()
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    var timedOut = false
    if finished.wait(timeout: .now() + seconds) == .timedOut {
        // Bounded: the child is killed, and the caller fails on `timedOut` with whatever it printed.
        timedOut = true
        kill(process.processIdentifier, SIGKILL)
        _ = finished.wait(timeout: .now() + 10)
    }
    return BoundedOutcome(
        status: process.terminationStatus, timedOut: timedOut,
        stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
}
