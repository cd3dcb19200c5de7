import Foundation
import Testing

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// A full file system and a file-size limit under the report folder: exit 74 naming the path, the previous
/// report intact, nothing left behind.
@Suite(.serialized, .timeLimit(.minutes(30)))
struct FullDiskFaultTests {
    /// A 2 MiB tmpfs mounted on the trial's Reports folder (root only), filled so that `room` bytes are free.
    static func mountFull(_ trial: Trial, room: Int) throws {
        guard getuid() == 0 else {
            try Test.cancel("mounting a tmpfs needs root; the file-size limit test covers a failing write")
        }
        guard mount("tmpfs", trial.reports, "tmpfs", 0, "size=2m") == 0 else {
            try Test.cancel("cannot mount a tmpfs here: \(String(cString: strerror(errno)))")
        }
        trial.mountPoint = trial.reports
        try trial.placePrevious()
        var space = statvfs()
        guard statvfs(trial.reports, &space) == 0 else {
            throw FaultError("statvfs: \(String(cString: strerror(errno)))")
        }
        let free = Int(space.f_bavail) * Int(space.f_frsize)
        let filler = open("\(trial.reports)/filler.bin", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        defer { close(filler) }
        guard filler >= 0, posix_fallocate(filler, 0, off_t(max(0, free - room))) == 0 else {
            throw FaultError("cannot fill the tmpfs")
        }
    }

    @Test func aFullFileSystemExits74AndKeepsThePreviousReport() throws {
        let results = try runTrials("full file system (tmpfs, ENOSPC)") { index in
            let trial = try Trial()
            let reportBytes = try PreviousReport.files().values.reduce(0) { $0 + $1.count }
            // The first trial leaves no room at all; the others a random share up to one and a half reports, so
            // the write fails at any of its files, or (with room enough) succeeds.
            let room = index == 0 ? 0 : Int.random(in: 0...(reportBytes * 3 / 2))
            try Self.mountFull(trial, room: room)
            let scenario = try trial.scenario(Scenarios.quick, name: "quick.yaml")
            let run = try trial.start(["run", scenario, "--out", trial.out])
            let ending = try run.finish(within: 60, "the run on a full file system")
            var (findings, outcome) = trial.judge(
                run, ending: ending, elapsed: nil,
                Expectation(
                    endings: index == 0 ? [.exited(74)] : [.exited(74), .exited(0)], withinSeconds: nil,
                    folder: ending == .exited(0) ? [.complete] : [.previous],
                    message: "No space left on device; the previous report is intact"))
            if ending == .exited(74) && !trial.stderrText.contains("error: \(trial.reports)/") {
                findings.silentLosses.append("the error names no path under \(trial.reports): \(trial.stderrText)")
            }
            return (findings, outcome)
        }
        #expect(results.problems == [])
    }

    /// A file-size limit (RLIMIT_FSIZE, `ulimit -f`) smaller than run.json: the write fails with EFBIG, which
    /// the harness sees only because it ignores SIGXFSZ (whose default action would kill it mid-write). The
    /// case processes are under the limit too (their 1.3 MiB sample files fail); how their rows read does not
    /// matter here, as no report may be written.
    @Test func aFileSizeLimitExits74AndKeepsThePreviousReport() throws {
        let results = try runTrials("file-size limit (EFBIG)") { _ in
            let trial = try Trial()
            try trial.placePrevious()
            let scenario = try trial.scenario(Scenarios.quick)
            // POSIX counts `ulimit -f` in 512-byte blocks: 3 blocks, 1.5 KiB (a case spec is under 1 KiB, run.json of
            // two crashed cases over 3 KiB).
            let run = try trial.start(
                [
                    "-c", "ulimit -f 3 && exec \"$0\" \"$@\"", HarnessProcess.binary, "run", scenario, "--out",
                    trial.out,
                ],
                executable: "/bin/sh")
            let ending = try run.finish(within: 60, "the run under a file-size limit")
            return trial.judge(
                run, ending: ending, elapsed: nil,
                Expectation(
                    endings: [.exited(74)], withinSeconds: nil, folder: [.previous],
                    message: "run.json: File too large; the previous report is intact"))
        }
        #expect(results.problems == [])
    }
}

/// Closed or broken stdout and stderr: the run completes with its own exit code and a whole report; the
/// closed descriptors are never reused for the run's files (a message would land in them).
@Suite(.serialized, .timeLimit(.minutes(30)))
struct ClosedStreamFaultTests {
    static let streams: [(String, Stream, Stream)] = [
        ("stdout closed", .closed, .file("")),
        ("stderr closed", .file(""), .closed),
        ("stdout and stderr closed", .closed, .closed),
        ("stdout a broken pipe", .brokenPipe, .file("")),
        ("stderr a broken pipe", .file(""), .brokenPipe),
    ]

    /// A run with a crashing strategy, so the end prints error lines (exit 1) besides the readings.
    static let withCrash = Scenarios.quick.replacingOccurrences(
        of: "strategies: [hold-large, churn]", with: "strategies: [hold-large, crash]")

    @Test(arguments: streams)
    func aRunWithClosedStreamsCompletesWithItsExitCode(name: String, stdout: Stream, stderr: Stream) throws {
        let results = try runTrials(name) { index in
            let trial = try Trial()
            try trial.placePrevious()
            let crashing = index % 2 == 1
            let scenario = try trial.scenario(crashing ? Self.withCrash : Scenarios.quick)
            let run = try trial.start(
                ["run", scenario, "--out", trial.out, "--verbose"], stdout: trial.resolve(stdout, "stdout"),
                stderr: trial.resolve(stderr, "stderr"))
            let ending = try run.finish(within: 60, name)
            let expected: Ending = crashing ? .exited(1) : .exited(0)
            return trial.judge(
                run, ending: ending, elapsed: nil,
                Expectation(endings: [expected], withinSeconds: nil, folder: [.complete], message: nil))
        }
        #expect(results.problems == [])
    }

    @Test(arguments: [Int32(1), 2])
    func aClosedStreamIsNotReusedForTheRunsFiles(descriptor: Int32) throws {
        let trial = try Trial()
        let scenario = try trial.scenario(Scenarios.slow())
        let run = try trial.start(
            ["run", scenario, "--out", trial.out, "--verbose"], stdout: descriptor == 1 ? .closed : nil,
            stderr: descriptor == 2 ? .closed : nil)
        let striker = Striker(trial: trial, run: run)
        try #require(Deadline.poll(seconds: 60, interval: 0.005) { striker.caseStarted }, "\(trial.stderrText)")
        // While a case runs the run holds its lock file, its working folder's files and the guard's pipe open.
        let target = ProcessTable.descriptorTarget(of: run.pid, descriptor)
        #expect(target == "/dev/null", "descriptor \(descriptor) of the harness points to \(target ?? "nothing")")
        run.send(SIGINT)
        let ending = try run.finish(within: 10, "the interrupted run")
        #expect(ending == .exited(128 + SIGINT))
        let left = trial.leftovers(of: [run.pid], within: 1)
        #expect(left.processes.isEmpty && left.files.isEmpty, "\(left)")
    }
}

extension Trial {
    /// A stream of the trial: `.file("")` becomes the trial's own stdout or stderr file.
    func resolve(_ stream: Stream, _ name: String) -> Stream {
        if case .file(let path) = stream, path.isEmpty { return .file(name == "stdout" ? stdoutPath : stderrPath) }
        return stream
    }
}

/// No escape codes on stderr unless it is a terminal that takes them.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct TerminalFaultTests {
    /// A pseudo-terminal: the harness writes to `slave`, the test reads `master`.
    static func openTerminal() throws -> (master: Int32, slave: Int32) {
        // /dev/ptmx and two ioctls, as posix_openpt, unlockpt and ptsname do (the Glibc module lacks them).
        // TIOCSPTLCK and TIOCGPTN: _IOW('T', 0x31, int) and _IOR('T', 0x30, unsigned int) of asm-generic.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
            throw FaultError("no pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else { throw FaultError("cannot open /dev/pts/\(number)") }
        return (master, slave)
    }

    /// Runs a scenario with a crashing strategy (so stderr gets progress and error lines) and returns stderr.
    static func stderr(terminal: Bool, environment: [String: String?]) throws -> (Ending, String) {
        // The crash only needs its error line: without the runtime's backtrace it ends a second sooner.
        let environment = environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { own, _ in own }
        let trial = try Trial()
        let scenario = try trial.scenario(ClosedStreamFaultTests.withCrash)
        guard terminal else {
            let run = try trial.start(["run", scenario, "--out", trial.out], environment: environment)
            return (try run.finish(within: 60, "the run"), trial.stderrText)
        }
        let (master, slave) = try openTerminal()
        defer { close(master) }
        let run = try trial.start(
            ["run", scenario, "--out", trial.out], environment: environment, stderr: .descriptor(slave))
        close(slave)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Drained while it runs, so a full terminal buffer never blocks the harness.
        let deadline = Deadline(seconds: 60)
        var ending: Ending?
        repeat {
            ending = run.wait(seconds: 0.01)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                bytes += buffer[0..<count]
            }
        } while ending == nil && !deadline.passed
        return (try ending ?? run.finish(within: 0, "the run"), String(decoding: bytes, as: UTF8.self))
    }

    @Test func anInteractiveTerminalGetsEscapeCodesAndNothingElseDoes() throws {
        // The probe first: a terminal that takes escape codes gets the progress line redrawn with them.
        let (interactiveEnding, interactive) = try Self.stderr(
            terminal: true, environment: ["TERM": "xterm", "NO_COLOR": nil])
        #expect(interactiveEnding == .exited(1))
        #expect(interactive.contains("\u{1B}["), "the probe must see escape codes on a terminal: \(interactive)")
        #expect(interactive.contains("error: fault-quick / crash #1: crashed"))
        for (terminal, environment, what) in [
            (true, ["TERM": "dumb", "NO_COLOR": nil], "TERM=dumb"),
            (true, ["TERM": "xterm", "NO_COLOR": "1"], "NO_COLOR"),
            (false, ["TERM": "xterm", "NO_COLOR": nil], "stderr a file"),
        ] as [(Bool, [String: String?], String)] {
            let (ending, text) = try Self.stderr(terminal: terminal, environment: environment)
            #expect(ending == .exited(1), "\(what)")
            #expect(text.contains("error: fault-quick / crash #1: crashed"), "\(what): \(text)")
            #expect(!text.contains("\u{1B}"), "\(what): \(text.debugDescription)")
        }
    }
}
