import AllocatorProbe
import FileIO
import Foundation
import HarnessModel
import Reports
import TestSupport
import Testing
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// `memharness profile -- PROGRAM` end to end, on the built binaries: a C program (agent-probe) whose
/// allocations are known, scripts, and programs that cannot be measured. Truths come from jemalloc's size
/// classes (`nallocx`), never from written-down numbers.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ProfileCommandTests {
    static let mebibyte = 1 << 20

    /// How far above the truth a profiled peak may be: 2% (what the issue asks), plus the program's own
    /// start-up allocations (stdio's buffer, the loader's) for small truths.
    static func limit(_ truth: Int) -> Int { truth + truth / 50 }

    @Test func aHeldBlockIsReportedWithin2Percent() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.profile([], [ProgramTrial.agentProbe, "hold", "64MiB", "300"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // memharness's own lines are on stderr; stdout is the program's.
        #expect(outcome.stderr.contains("agent-probe #1: peak allocated 64.0"), "\(outcome.stderr)")
        #expect(!outcome.stdout.contains("peak allocated"), "\(outcome.stdout)")

        let row = try trial.onlyRow()
        #expect(row["status"] == "ok")
        let truth = AllocatorCost.bytes(forRequest: 64 * Self.mebibyte)
        let peak = try ProgramTrial.bytes(row, "peak_allocated_net_bytes")
        // The probe sees the live block (its size class, less what the program freed of its start at most),
        // and no more than 2% beside it.
        #expect(
            peak >= (try ProgramTrial.leastPeakNetBytes(holding: truth, row)) && peak <= Self.limit(truth),
            "peak \(peak) vs truth \(truth)")
        #expect(try ProgramTrial.bytes(row, "peak_rss_bytes") >= 64 * Self.mebibyte, "every page was written")
        #expect(row["exit_status"] == "0")
        #expect(row["stderr_tail"] == "")

        let program = try #require(trial.record().report.scenarios.first?.cases.first?.measurements?.program)
        #expect(program.termination == .exited(0))
        #expect(program.processCount == 1)
        #expect(program.commandLine.hasSuffix("agent-probe hold 64MiB 300"))
        let samples = CSVTable.parse(try String(contentsOfFile: "\(trial.out)/samples.csv", encoding: .utf8))
        #expect(samples.count > 100, "a timeline sampled every millisecond over 300 ms")
        #expect(FileManager.default.fileExists(atPath: "\(trial.out)/report.md"))
    }

    @Test func exactModeCatchesAMillisecondSpikeOnTopOfAHold() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.profile(
            ["--peak", "exact"], [ProgramTrial.agentProbe, "spike", "48MiB", "32MiB", "1"])
        #expect(outcome.status == 0, "\(outcome.stderr)")

        let row = try trial.onlyRow()
        let hold = AllocatorCost.bytes(forRequest: 48 * Self.mebibyte)
        let truth = hold + AllocatorCost.bytes(forRequest: 32 * Self.mebibyte)
        let exact = try ProgramTrial.bytes(row, "exact_peak_net_bytes")
        #expect(exact >= truth && exact <= Self.limit(truth), "exact peak \(exact) vs truth \(truth)")
        // The sampler sees the hold; whether a sample fell inside the spike is luck (the excess says which).
        let sampled = try ProgramTrial.bytes(row, "peak_allocated_net_bytes")
        #expect(sampled >= hold && sampled <= Self.limit(truth), "sampled peak \(sampled)")
        #expect(try ProgramTrial.bytes(row, "exact_allocation_calls") >= 2)
    }

    @Test func aFailingProgramsRowCarriesItsExitStatusAndStderrTail() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let script = try trial.script(
            "fails.sh",
            """
            #!/bin/sh
            echo "reading the configuration" >&2
            echo "error: the disk is on fire" >&2
            exit 3

            """)
        let outcome = try trial.profile([], [script])
        #expect(outcome.status == 1, "a program that fails is a failed case: \(outcome.stderr)")
        #expect(outcome.stderr.contains("failed: exited with status 3: reading the configuration | error: the disk"))

        let row = try trial.onlyRow()
        #expect(row["status"] == "failed")
        #expect(row["failure"] == "exited with status 3: reading the configuration | error: the disk is on fire")
        #expect(row["exit_status"] == "3")
        #expect(row["stderr_tail"] == "reading the configuration | error: the disk is on fire")
        let program = try #require(trial.record().report.scenarios.first?.cases.first?.measurements?.program)
        #expect(program.termination == .exited(3))
        #expect(program.stderrTail == "reading the configuration\nerror: the disk is on fire")
        let report = try String(contentsOfFile: "\(trial.out)/report.md", encoding: .utf8)
        #expect(report.contains("| `fails.sh` | 1 | failed | exited with status 3: reading the configuration"))
    }

    @Test func aProgramThatAllocatesOutsideMallocIsRefusedNotAZeroRow() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        // 64 MiB from mmap, as a program with an allocator of its own (Go's runtime, a static mimalloc) does.
        let outcome = try trial.profile([], [ProgramTrial.agentProbe, "mmap", "64MiB", "300"])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("allocates through an allocator of its own"), "\(outcome.stderr)")
        let row = try trial.onlyRow()
        #expect(row["status"] == "not-measured")
        #expect(row["failure"]?.contains("its resident memory grew by 64.") == true, "\(row)")
        for column in ["peak_allocated_net_bytes", "peak_rss_bytes", "residue_bytes"] {
            #expect(row[column] == "", "\(column) is empty, not a zero")
        }
    }

    @Test func aProgramsChildProcessesAreMeasuredWithIt() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        // The shell starts two programs that hold their blocks at the same time (1.5 s overlap).
        let probe = ProgramTrial.agentProbe
        let script = try trial.script(
            "two.sh",
            """
            #!/bin/sh
            \(probe) hold 16MiB 1500 > /dev/null &
            \(probe) hold 24MiB 1500 > /dev/null
            wait

            """)
        let outcome = try trial.profile([], [script])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let row = try trial.onlyRow()
        let truth =
            AllocatorCost.bytes(forRequest: 16 * Self.mebibyte)
            + AllocatorCost.bytes(forRequest: 24 * Self.mebibyte)
        let peak = try ProgramTrial.bytes(row, "peak_allocated_net_bytes")
        // The shell's own allocations ride on top: a few hundred KiB, inside the 2%.
        #expect(
            peak >= (try ProgramTrial.leastPeakNetBytes(holding: truth, row)) && peak <= Self.limit(truth),
            "peak \(peak) vs truth \(truth)")
        let program = try #require(trial.record().report.scenarios.first?.cases.first?.measurements?.program)
        #expect(program.processCount == 3, "the shell and its two programs")
    }

    /// The program's measurements and its report of processes, from run.json.
    func programMeasurements(_ trial: ProgramTrial) throws -> (CaseMeasurements, ProgramReport) {
        let measurements = try #require(trial.record().report.scenarios.first?.cases.first?.measurements)
        return (measurements, try #require(measurements.program))
    }

    /// A shell running two programs one after the other (the shell ends with _exit, as dash does): each process's
    /// exact peak, and the tree's as their sum, labelled as an upper bound.
    @Test func exactModeOverAShellScriptGivesEachProcesssPeakAndTheirSum() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let probe = ProgramTrial.agentProbe
        let outcome = try trial.profile(
            ["--peak", "exact"],
            ["/bin/sh", "-c", "\(probe) hold 8MiB 50 > /dev/null; \(probe) hold 16MiB 50 > /dev/null"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let (measurements, program) = try programMeasurements(trial)
        let peaks = try #require(program.processPeaks, "no figures per process")
        #expect(peaks.count == 3, "the shell and its two programs: \(peaks)")
        let small = AllocatorCost.bytes(forRequest: 8 * Self.mebibyte)
        let large = AllocatorCost.bytes(forRequest: 16 * Self.mebibyte)
        let probes = peaks.filter { $0.executable?.hasSuffix("agent-probe") == true }.compactMap(\.exact)
        #expect(probes.count == 2, "\(peaks)")
        // Each program's own peak: its block, above what it had at the agent's load (stdio's buffer at most beside).
        let nets = probes.map(\.peakNetBytes).sorted()
        #expect(nets.count == 2 && nets[0] >= small && nets[0] <= Self.limit(small), "\(nets)")
        #expect(nets.count == 2 && nets[1] >= large && nets[1] <= Self.limit(large), "\(nets)")
        let exact = try #require(measurements.exact, "the tree's exact peak is missing")
        #expect(exact.summedProcessCount == 3)
        #expect(exact.peakNetBytes >= small + large && exact.peakNetBytes <= Self.limit(small + large) + (1 << 20))
        #expect(outcome.stderr.contains("exact peak at most"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("an upper bound"), "\(outcome.stderr)")
        let report = try String(contentsOfFile: "\(trial.out)/report.md", encoding: .utf8)
        #expect(report.contains("is the sum of the 3 processes' exact peaks, an upper bound"))
    }

    /// A process that forks children without exec: each child's exact peak is counted from the fork.
    @Test func exactModeOverForkedChildrenCountsEachFromItsFork() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.profile(["--peak", "exact"], [ProgramTrial.agentProbe, "fork", "2"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let (measurements, program) = try programMeasurements(trial)
        let peaks = try #require(program.processPeaks)
        #expect(peaks.count == 3, "the parent and two children: \(peaks)")
        let held = AllocatorCost.bytes(forRequest: 8 * Self.mebibyte)
        for child in peaks.dropFirst() {
            let exact = try #require(child.exact, "child \(child.processID) left no count")
            // Its 8 MiB and its small blocks, not the parent's heap it began with (which is not its own).
            #expect(exact.peakNetBytes >= held && exact.peakNetBytes <= held + (1 << 20), "\(exact)")
        }
        #expect(try #require(measurements.exact).summedProcessCount == 3)
    }

    /// A process of the tree killed before it could write its count: no exact peak for the tree, and the row
    /// says why, naming each process's figure.
    @Test func exactModeSaysWhyATreeHasNoExactPeak() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let probe = ProgramTrial.agentProbe
        let script = try trial.script(
            "killed.sh",
            """
            #!/bin/sh
            \(probe) hold 8MiB 10000 > /dev/null &
            sleep 0.5
            kill -9 $!
            wait
            exit 0

            """)
        let outcome = try trial.profile(["--peak", "exact"], [script])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let (measurements, program) = try programMeasurements(trial)
        let peaks = try #require(program.processPeaks)
        #expect(peaks.contains { $0.exact == nil }, "\(peaks)")
        #expect(peaks.contains { $0.exact != nil }, "the shell's count is there: \(peaks)")
        #expect(measurements.exact == nil)
        #expect(outcome.stderr.contains("no exact peak for the"), "\(outcome.stderr)")
        let report = try String(contentsOfFile: "\(trial.out)/report.md", encoding: .utf8)
        #expect(report.contains("left no exact count"))
    }

    /// 64 MiB mapped and touched beside a 16 MiB malloc'd block: the resident set is five times the allocator's
    /// peak, and the report says so with both figures. A program whose memory is all malloc'd gets no warning.
    @Test func residentMemoryOutsideMallocIsNamedWithBothFigures() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.profile([], [ProgramTrial.agentProbe, "mmap", "64MiB", "300", "16MiB"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let (measurements, program) = try programMeasurements(trial)
        let excess = try #require(program.residentBeyondAllocator, "no warning")
        // The malloc'd block is seen; the mapped one only in the resident set.
        #expect(measurements.peakAllocatedNetBytes >= AllocatorCost.bytes(forRequest: 16 * Self.mebibyte) - 1 << 20)
        #expect((excess.peakAnonymousBytes ?? 0) >= 80 * Self.mebibyte)
        #expect((excess.peakAllocatorResidentBytes ?? .max) < 32 * Self.mebibyte)
        #expect(excess.peakAllocatedBytes < 32 * Self.mebibyte)
        #expect(outcome.stderr.contains("warning: the anonymous resident set peaked at"), "\(outcome.stderr)")
        let report = try String(contentsOfFile: "\(trial.out)/report.md", encoding: .utf8)
        #expect(report.contains("the program holds memory outside malloc"))

        let plain = try ProgramTrial()
        defer { plain.remove() }
        let held = try plain.profile([], [ProgramTrial.agentProbe, "hold", "64MiB", "300"])
        #expect(held.status == 0, "\(held.stderr)")
        let (heldMeasurements, heldProgram) = try programMeasurements(plain)
        #expect(heldMeasurements.peakRSSBytes >= 64 * Self.mebibyte, "every page was written")
        #expect(heldProgram.residentBeyondAllocator == nil)
        #expect(!held.stderr.contains("warning:"))
    }

    /// A large binary's mapped code is resident but not anonymous: swift-format (a 40 MB executable whose RSS is about
    /// ten times what it allocates) gets no warning of memory outside malloc.
    @Test func aLargeProgramsMappedCodeIsNotMemoryOutsideMalloc() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let swiftFormat = "/opt/swift/usr/bin/swift-format"
        try #require(FileManager.default.isExecutableFile(atPath: swiftFormat), "the toolchain's swift-format")
        let source = try trial.script("input.swift", "let x = [1,2,3]\nfunc f( ) { print(x) }\n")
        let outcome = try trial.profile([], [swiftFormat, "format", source])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let (measurements, program) = try programMeasurements(trial)
        // The probe first: the resident set is well above what was allocated, as the warning used to see it.
        #expect(measurements.peakRSSBytes > 4 * measurements.peakAllocatedNetBytes, "\(measurements.peakRSSBytes)")
        #expect(program.residentBeyondAllocator == nil)
        #expect(!outcome.stderr.contains("warning:"), "\(outcome.stderr)")
    }

    @Test func pythonRunsWithEveryObjectThroughMallocUnlessTheUserSaysOtherwise() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let script = try trial.script("env.sh", "#!/bin/sh\necho \"PYTHONMALLOC=$PYTHONMALLOC\" >&2\n")
        #expect(try trial.profile([], [script]).status == 0)
        #expect(try trial.onlyRow()["stderr_tail"] == "PYTHONMALLOC=malloc")
        #expect(
            try trial.memharness(
                ["profile", "--out", trial.out, "--", script], environment: ["PYTHONMALLOC": "pymalloc"]
            ).status == 0)
        #expect(try trial.onlyRow()["stderr_tail"] == "PYTHONMALLOC=pymalloc")
    }

    @Test func helpIsShownNotRunAsAProgram() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let help = try trial.memharness(["profile", "--help"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdout.contains("USAGE: memharness profile ["), "\(help.stdout)")
        #expect(help.stdout.contains("--out <dir>"), "\(help.stdout)")
        // After `--` it is the program's name, as any word there.
        let program = try trial.memharness(["profile", "--out", trial.out, "--", "--help"])
        #expect(program.status == 64)
        #expect(program.stderr.contains("error: --help: no such program in PATH"), "\(program.stderr)")
    }

    /// A minimal ELF header of a 64-bit program without a PT_INTERP program header: what `gcc -static` makes,
    /// as far as the check before the run reads.
    static let staticELFHeader: [UInt8] = {
        var bytes = [UInt8](repeating: 0, count: 64)
        bytes.replaceSubrange(0..<6, with: [0x7F, 0x45, 0x4C, 0x46, 2, 1])  // ELF, 64-bit, little-endian
        bytes[0x10] = 2  // ET_EXEC
        bytes[0x12] = 0x3E  // x86-64
        bytes[0x20] = 64  // program headers at 64...
        bytes[0x36] = 56  // ...of 56 bytes...
        bytes[0x38] = 0  // ...none of them
        return bytes
    }()

    @Test(arguments: [
        ("missing", "./missing", "./missing: no such file (<folder>/missing)"),
        ("not in PATH", "no-such-tool-anywhere", "no-such-tool-anywhere: no such program in PATH; give its path"),
        ("not executable", "./plain.sh", "./plain.sh: not executable (chmod +x <folder>/plain.sh)"),
        ("no shebang", "./noshebang", "./noshebang: not an executable: neither a binary for this machine nor a script"),
        ("directory", "./folder", "./folder: is a directory; expected an executable program"),
        ("missing interpreter", "./badinterp.sh", "./badinterp.sh: its interpreter /no/such/interpreter: no such file"),
        ("interpreter not in PATH", "./env.sh", "./env.sh: its interpreter no-such-interpreter (#!/usr/bin/env"),
        ("statically linked", "./static", "./static: statically linked: the agent cannot be preloaded into it"),
    ])
    func badProgramsExit64BeforeAnythingRuns(label: String, program: String, message: String) throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        try trial.script("plain.sh", "#!/bin/sh\necho never\n", mode: 0o644)
        try trial.script("noshebang", "echo never\n")
        try FileManager.default.createDirectory(atPath: "\(trial.folder)/folder", withIntermediateDirectories: false)
        try trial.script("badinterp.sh", "#!/no/such/interpreter\n")
        try trial.script("env.sh", "#!/usr/bin/env no-such-interpreter\n")
        try Data(Self.staticELFHeader).write(to: URL(fileURLWithPath: "\(trial.folder)/static"))
        chmod("\(trial.folder)/static", 0o755)

        let outcome = try trial.profile([], [program])
        #expect(outcome.status == 64, "\(label): \(outcome.stderr)")
        let expected = "error: " + message.replacingOccurrences(of: "<folder>", with: trial.folder)
        #expect(outcome.stderr.contains(expected), "\(label): \(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: trial.out), "\(label): nothing ran, nothing was written")
    }

    /// The program's standard output is the program's: `profile -- echo hello` prints exactly what echo prints, and
    /// `profile -- swift-format format FILE` the formatted source swift-format alone prints. Its standard error passes
    /// through too and is still quoted in the row; with --repeat, the output of the first run only.
    @Test func theProgramsOutputPassesThroughAndMemharnessSpeaksOnStderr() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let echo = try trial.profile(["--repeat", "2"], ["/bin/echo", "hello"])
        #expect(echo.status == 0, "\(echo.stderr)")
        #expect(echo.stdout == "hello\n", "the first run's output, once: \(echo.stdout)")
        // Braces are the program's own: `profile` has no parameters to fill in (node's `a.push({i})` became `a.push()`).
        let braces = try trial.profile([], ["/bin/echo", "a.push({i})", "{}", "{size}"])
        #expect(braces.stdout == "a.push({i}) {} {size}\n", "\(braces.stdout)")
        #expect(echo.stderr.contains("echo #1: peak allocated"), "\(echo.stderr)")

        let source = try trial.script("input.swift", "let x = [1,2,3]\nfunc f( ) { print(x) }\n")
        let swiftFormat = "/opt/swift/usr/bin/swift-format"
        try #require(FileManager.default.isExecutableFile(atPath: swiftFormat), "the toolchain's swift-format")
        let alone = try ChildRun.run(swiftFormat, ["format", source], timeout: .seconds(60))
        #expect(alone.status == 0 && alone.stdout.contains("func f() {"), "\(alone.stdout)")
        let second = try ProgramTrial()
        defer { second.remove() }
        let formatted = try second.profile([], [swiftFormat, "format", source])
        #expect(formatted.stdout == alone.stdout, "\(formatted.stdout)")

        let failing = try trial.script("fails.sh", "#!/bin/sh\necho on-stdout\necho on-stderr >&2\nexit 3\n")
        let failed = try trial.profile([], [failing])
        #expect(failed.stdout == "on-stdout\n", "\(failed.stdout)")
        #expect(failed.stderr.contains("on-stderr\n"), "\(failed.stderr)")
        #expect(try trial.onlyRow()["stderr_tail"] == "on-stderr", "the row still quotes it")
    }
}
