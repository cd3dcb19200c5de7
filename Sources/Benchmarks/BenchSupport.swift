import BuiltInWorkloads
import ChildProcesses
import Foundation
import HarnessModel
import Measurement
import Runner
import Scenarios
import WorkloadKit

/// The ways a case is run side by side in the overhead and accuracy benchmarks.
enum Mode: String, CaseIterable {
    /// `memharness`, sampler off: the reference.
    case uninstrumented
    /// `memharness`, sampler at 1 ms (the default run).
    case sampled
    /// `memharness` with `--peak exact`: the agent preloaded counts every allocation (and the 1 ms sampler
    /// runs, as `run --peak exact` does).
    case exact
    /// `memharness` under `valgrind --tool=massif`, sampler off.
    case massif
    /// `memharness` under `heaptrack`, sampler off.
    case heaptrack

    var label: String {
        switch self {
        case .uninstrumented: return "uninstrumented"
        case .sampled: return "sampled, 1 ms"
        case .exact: return "exact (`--peak exact`)"
        case .massif: return "valgrind massif"
        case .heaptrack: return "heaptrack"
        }
    }

    var usesTool: Bool { self == .massif || self == .heaptrack }
}

/// Where the binaries are and how each mode runs a case.
struct BenchEnvironment {
    /// The folder of memharness, memharness-bench and the agent (libmemharness-agent.so).
    var binDirectory: URL
    /// A folder for the tools' output files.
    var scratch: URL

    static func current() throws -> BenchEnvironment {
        let me =
            // Without /proc mounted, the path the benchmark was started by finds the same folder.
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "memharness-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        return BenchEnvironment(binDirectory: URL(fileURLWithPath: me).deletingLastPathComponent(), scratch: scratch)
    }

    var plainBinary: String { binDirectory.appendingPathComponent("memharness").path }
    /// The agent preloaded for exact and attributed modes.
    var agent: AgentPreload? { AgentPreload.locate(besideExecutable: plainBinary) }
    /// `memharness` without its debug information, for valgrind: valgrind 3.19 cannot read the DWARF 5
    /// the Swift toolchain writes ("Possibly corrupted debuginfo file") and gives up. The symbol table
    /// stays, so massif still names every function.
    var massifBinary: String { scratch.appendingPathComponent("memharness").path }

    /// Writes `massifBinary` (objcopy --strip-debug of `plainBinary`).
    func prepareMassifBinary() throws {
        guard !FileManager.default.fileExists(atPath: massifBinary) else { return }
        let tool = Self.which("objcopy") ?? Self.which("llvm-objcopy") ?? "/usr/bin/objcopy"
        let ended = try BenchChild.run(tool, ["--strip-debug", plainBinary, massifBinary], timeout: .seconds(300))
        guard ended.termination.isSuccess else {
            throw BenchError(
                path: massifBinary, reason: "objcopy --strip-debug failed (\(ended.termination)); install binutils")
        }
    }

    /// Problems that keep `modes` from running: a missing binary or tool, with how to get it.
    func missing(for modes: [Mode]) -> [String] {
        var problems: [String] = []
        let fileManager = FileManager.default
        if !fileManager.isExecutableFile(atPath: plainBinary) {
            problems.append("\(plainBinary) is missing; build it with `swift build -c release --product memharness`")
        }
        if modes.contains(.exact) && agent == nil {
            problems.append(AgentPreload.missingDescription(besideExecutable: plainBinary))
        }
        for (mode, tool, package) in [(Mode.massif, "valgrind", "valgrind"), (.heaptrack, "heaptrack", "heaptrack")]
        where modes.contains(mode) && Self.which(tool) == nil {
            problems.append("\(tool) is not installed; `make bench` installs it, or: sudo apt-get install \(package)")
        }
        return problems
    }

    static func which(_ tool: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// The launcher of `mode`; tools write their output to `output` (massif: that file; heaptrack: that stem plus
    /// `.zst`).
    func launcher(_ mode: Mode, output: String = "") -> ProcessCaseLauncher {
        var launcher = ProcessCaseLauncher(executable: plainBinary, agent: agent)
        switch mode {
        case .uninstrumented, .sampled, .exact:
            break
        case .massif:
            // jemalloc's malloc family is replaced by massif's (so the start-up check that jemalloc is
            // the allocator must be skipped); --peak-inaccuracy=0 records the exact peak.
            launcher.executable = massifBinary
            launcher.wrapper = [
                "valgrind", "--tool=massif", "--massif-out-file=\(output)", "--peak-inaccuracy=0",
                "--threshold=0.1", "--soname-synonyms=somalloc=*jemalloc*",
            ]
            launcher.childArguments = ["--no-allocator-check"]
        case .heaptrack:
            // heaptrack's preloaded malloc family forwards to the next one, jemalloc's: the check passes.
            launcher.wrapper = ["heaptrack", "--output", output]
        }
        return launcher
    }

    /// `spec` as `mode` runs it: the sampler at 1 ms for sampled and exact, off otherwise.
    func spec(_ spec: CaseSpec, for mode: Mode) -> CaseSpec {
        var spec = spec
        spec.samplingIntervalNanoseconds = (mode == .sampled || mode == .exact) ? 1_000_000 : 0
        spec.peakMode = mode == .exact ? .exact : .sampled
        if mode.usesTool { spec.timeoutNanoseconds = 1_200_000_000_000 }
        return spec
    }
}

/// One case run as a benchmark sees it.
struct TimedRun {
    var result: CaseResult
    /// Wall time of the child from spawn to exit (tool start-up and post-processing included), nanoseconds.
    var processWallNanoseconds: Int64
    /// CPU time of the child and everything it started and waited for (a tool's helper processes), nanoseconds.
    var processCPUNanoseconds: Int64

    /// The case's own wall time (setup to teardown), seconds.
    var caseWallSeconds: Double { Double(result.measurements?.durationNanoseconds ?? 0) / 1e9 }
    /// The case's own CPU time (every thread of the child), seconds.
    var caseCPUSeconds: Double { Double(result.measurements?.cpuNanoseconds ?? 0) / 1e9 }
}

enum Bench {
    /// Runs `spec` with `launcher` and times the whole child, tool included.
    static func timed(_ launcher: ProcessCaseLauncher, _ spec: CaseSpec) -> TimedRun {
        let cpuBefore = childrenCPUNanoseconds()
        let start = MonotonicClock.nanoseconds()
        let result = launcher.run(spec)
        let wall = MonotonicClock.nanoseconds() - start
        return TimedRun(
            result: result, processWallNanoseconds: wall, processCPUNanoseconds: childrenCPUNanoseconds() - cpuBefore)
    }

    /// User plus system time of every child process waited for so far, nanoseconds.
    static func childrenCPUNanoseconds() -> Int64 {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func nanoseconds(_ time: timeval) -> Int64 { Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_usec) * 1_000 }
        return nanoseconds(usage.ru_utime) + nanoseconds(usage.ru_stime)
    }

    /// A calibration case with the workload's defaults and `parameters` over them.
    static func calibration(
        _ strategy: String, _ parameters: [String: ParameterValue], steps: [StepInvocation],
        scenario: String
    ) -> CaseSpec {
        let descriptor = BuiltInWorkloads.catalog.workload(named: "calibration")?.descriptor.parameters ?? []
        var values = ParameterValues(Dictionary(uniqueKeysWithValues: descriptor.map { ($0.name, $0.defaultValue) }))
        for (name, value) in parameters { values[name] = value }
        return CaseSpec(
            scenario: scenario, workload: "calibration", strategy: strategy, repetition: 1, parameters: values,
            steps: steps, samplingIntervalNanoseconds: 0, settleNanoseconds: 20_000_000)
    }

    /// The allocation-heavy loop the overhead benchmarks time: calibration's `churn`, `operations` malloc/free
    /// pairs of 16 B-4 KiB with 64 alive, one thread. One definition, so that their figures stay comparable.
    static func churn(_ operations: Int, scenario: String) -> CaseSpec {
        calibration("churn", ["churnOperations": .count(operations)], steps: [step("allocate")], scenario: scenario)
    }

    /// A step with no arguments (the workload's own), or `idle` for `duration`.
    static func step(_ name: String, phase: String? = nil) -> StepInvocation {
        StepInvocation(name: name, phase: phase ?? name, arguments: ParameterValues())
    }

    static func idle(_ duration: Duration) -> StepInvocation {
        StepInvocation(
            name: "idle", phase: "idle",
            arguments: ParameterValues(["duration": .duration(nanoseconds: duration.nanoseconds)]))
    }

    static func seconds(_ value: Double) -> String {
        value >= 10 ? Units.fixed(value, decimals: 1) + " s" : Units.fixed(value, decimals: 3) + " s"
    }

    static func ratio(_ value: Double, _ reference: Double) -> String {
        reference > 0 ? Units.fixed(value / reference, decimals: 2) + "x" : "–"
    }

    /// The closing lines of a benchmark's page: the scenario file it ran, as a YAML block.
    static func scenarioBlock(_ yaml: String) -> [String] {
        ["The scenario:", "", "```yaml", yaml.trimmingCharacters(in: .newlines), "```", ""]
    }

    /// `/proc/loadavg`'s first three fields: the load averages over 1, 5 and 15 minutes.
    static func loadAverage() -> String {
        // No /proc: the page says the load is unknown rather than fail the benchmark.
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "unknown"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// When, where and how a page was measured: the date, the machine, the build, the command, and the load
    /// average before and after (2 cores shared with other work: the load says how busy it was).
    static func provenance(loadBefore: String) -> String {
        let machine = MachineEnvironment.current(toolVersion: "", interval: .milliseconds(1))
        #if DEBUG
            let build = "debug build"
        #else
            let build = "release build with frame pointers (`make bench`)"
        #endif
        let command = (["memharness-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
        return "Measured \(ISO8601DateFormatter().string(from: Date())) on \(machine.cpuModel) × \(machine.cpuCount), "
            + "\(machine.operatingSystem), \(machine.kernel), jemalloc \(machine.jemallocVersion.prefix { $0 != "-" }), "
            + "Swift \(machine.swiftVersion); \(build), `\(command)`. Load average (1, 5, 15 min) before: "
            + "\(loadBefore), after: \(loadAverage())."
    }

    /// Writes a benchmark's text to `DIR/name`, its provenance after the title, and prints it.
    static func publish(_ text: String, name: String, directory: String, loadBefore: String) throws {
        var lines = text.components(separatedBy: "\n")
        lines.insert(contentsOf: ["", provenance(loadBefore: loadBefore)], at: min(1, lines.count))
        let page = lines.joined(separator: "\n")
        print(page)
        try page.write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8)
    }
}

extension ProcessCaseLauncher {
    /// Runs `spec` and names its outcome.
    func run(_ spec: CaseSpec) -> CaseResult {
        CaseResult(
            scenario: spec.scenario, workload: spec.workload, strategy: spec.strategy, repetition: spec.repetition,
            outcome: launch(spec))
    }
}

/// A benchmark could not prepare what it needs.
/// A tool or `memharness` run by a benchmark, to its end (`ChildProcess`, the harness's one way to start a child).
enum BenchChild {
    /// Runs `path` with `arguments` (this process's environment; stdin and stdout /dev/null, stderr this
    /// process's when `showStderr`) at most `timeout`; past it the child is killed with its group and this
    /// throws. How it ended, and its wall time in seconds.
    static func run(_ path: String, _ arguments: [String], timeout: Duration, showStderr: Bool = true) throws
        -> (termination: TerminationStatus, seconds: Double)
    {
        let start = ContinuousClock.now
        let child = try ChildProcess.spawn(
            path: path, arguments: arguments, environment: ProcessInfo.processInfo.environment,
            stderr: showStderr ? STDERR_FILENO : nil)
        guard case .ended(let end) = try child.wait(upTo: timeout.nanoseconds) else {
            throw BenchError(path: path, reason: "still ran after \(timeout) and was killed; is it stuck?")
        }
        return (end.termination, Double((ContinuousClock.now - start).nanoseconds) / 1e9)
    }
}

struct BenchError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "\(path): \(reason)" }
}
