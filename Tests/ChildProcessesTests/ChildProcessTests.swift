import ChildProcesses
import Foundation
import HarnessModel
import Testing

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only")
#endif

/// The one child-process layer: how a child ended, the bound on a wait, the group killed with it, its streams.
@Suite(.timeLimit(.minutes(1)))
struct ChildProcessTests {
    /// A scratch folder, removed by the caller.
    static func scratch() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("memharness-child-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The pid of the grandchild the shell wrote to `folder/grandchild`.
    static func grandchild(in folder: String) throws -> pid_t {
        let text = try String(contentsOfFile: "\(folder)/grandchild", encoding: .utf8)
        return try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    static func shell(_ script: String, stdin: Int32? = nil, stdout: Int32? = nil, directory: String? = nil)
        throws -> ChildProcess
    {
        try ChildProcess.spawn(
            path: "/bin/sh", arguments: ["-c", script], environment: ["PATH": "/usr/bin:/bin", "GREETING": "hello"],
            stdin: stdin, stdout: stdout, workingDirectory: directory)
    }

    @Test func anExitStatusAndASignalAreTwoEndings() throws {
        let exited = try Self.shell("exit 3").wait(upTo: 30_000_000_000)
        guard case .ended(let end) = exited else {
            Issue.record("no end: \(exited)")
            return
        }
        #expect(end.termination == .exited(3))
        #expect(end.termination.shellStatus == 3 && !end.termination.isSuccess)
        let signaled = try Self.shell("kill -TERM $$").wait(upTo: 30_000_000_000)
        guard case .ended(let killed) = signaled else {
            Issue.record("no end: \(signaled)")
            return
        }
        #expect(killed.termination == .signaled(SIGTERM))
        #expect(killed.termination.shellStatus == 128 + SIGTERM)
    }

    @Test func aChildPastItsBoundIsKilledWithItsGroup() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The shell starts a grandchild in its group, says its pid, and waits past the bound.
        let child = try Self.shell("sleep 30 & echo $! > \(folder)/grandchild; wait")
        #expect(waitForFile("\(folder)/grandchild"), "the shell started its grandchild")
        let waited = try child.wait(upTo: 200_000_000)
        #expect(waited == .timedOut(killed: waited.killedEnd), "the bound was hit: \(waited)")
        #expect(waited.killedEnd?.termination == .signaled(SIGKILL))
        let grandchild = try Self.grandchild(in: folder)
        #expect(endsSoon(grandchild), "the grandchild \(grandchild) died with its group")
    }

    @Test func whatAChildLeftInItsGroupDiesWhenItEnds() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The shell exits at once, leaving a grandchild in its group: no orphan may survive the reap.
        let waited = try Self.shell("sleep 30 & echo $! > \(folder)/grandchild; exit 0").wait(upTo: 30_000_000_000)
        #expect(waited.endedTermination == .exited(0))
        let grandchild = try Self.grandchild(in: folder)
        #expect(endsSoon(grandchild), "the grandchild \(grandchild) died with its group")
    }

    @Test func standardStreamsEnvironmentAndDirectoryReachTheChild() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "from stdin\n".write(toFile: "\(folder)/in", atomically: true, encoding: .utf8)
        let input = open("\(folder)/in", O_RDONLY | O_CLOEXEC)
        let output = open("\(folder)/out", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            close(input)
            close(output)
        }
        let child = try Self.shell("cat; echo $GREETING; pwd", stdin: input, stdout: output, directory: folder)
        #expect(try child.wait(upTo: 30_000_000_000).endedTermination == .exited(0))
        let text = try String(contentsOfFile: "\(folder)/out", encoding: .utf8)
        let resolved = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
        #expect(text == "from stdin\nhello\n\(resolved)\n" || text == "from stdin\nhello\n\(folder)\n", "\(text)")
    }

    @Test func aPipeCarriesTheOutputAndEndsWithTheChild() throws {
        let pipe = try ChildProcess.pipe()
        let child: ChildProcess
        do {
            defer { close(pipe.write) }  // the child's copy is the only writer left
            child = try Self.shell("echo through the pipe", stdout: pipe.write)
        }
        let reader = FileHandle(fileDescriptor: pipe.read, closeOnDealloc: true)
        // Reading to the end returns only once every writer closed: the child's end did not leak elsewhere.
        #expect(String(decoding: reader.readDataToEndOfFile(), as: UTF8.self) == "through the pipe\n")
        #expect(try child.wait(upTo: 30_000_000_000).endedTermination == .exited(0))
        #expect(fcntl(pipe.read, F_GETFD) & FD_CLOEXEC != 0, "the read end closes on exec")
    }

    @Test func aMissingExecutableCannotStartAndSaysWhy() {
        let error = #expect(throws: ChildProcessError.self) {
            try ChildProcess.spawn(path: "/nonexistent/tool", arguments: [], environment: [:])
        }
        #expect(error == .cannotStart(path: "/nonexistent/tool", errno: ENOENT))
        #expect(error?.description.hasPrefix("cannot start /nonexistent/tool: no such file") == true)
    }
}

extension BoundedWait {
    /// The end of a child killed at the bound, nil otherwise.
    var killedEnd: ChildEnd? {
        if case .timedOut(let killed) = self { return killed }
        return nil
    }

    /// How a child that ended within the bound ended, nil otherwise.
    var endedTermination: TerminationStatus? { endedWithinBound?.termination }
}

/// True once `path` exists, within 10 s.
func waitForFile(_ path: String) -> Bool {
    for _ in 0..<1000 {
        if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") { return true }
        usleep(10_000)
    }
    return false
}

/// True once process `pid` is gone or a zombie (killed, waiting for its new parent to reap it), within 10 s.
func endsSoon(_ pid: pid_t) -> Bool {
    for _ in 0..<1000 {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // The state follows the command's closing parenthesis: "pid (comm) S ...".
        if let close = stat.lastIndex(of: ")"), stat[stat.index(after: close)...].hasPrefix(" Z") { return true }
        usleep(10_000)
    }
    return false
}
