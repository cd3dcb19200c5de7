import AllocatorProbe
import Attribution
import ChildProcesses
import Foundation
import HarnessModel
import HeapGraph
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// One external program run as a case: started with the agent preloaded (jemalloc after it, so any
/// dynamically linked program allocates through jemalloc), measured by the agent's sampler thread
/// inside it, its output kept in the work folder, its kernel RSS peak read from `wait4`.
struct ProgramCase {
    let spec: CaseSpec
    let work: CaseWorkFolder
    let environment: [String: String]
    /// The load client of a server's load steps (`memharness-load`); nil when there is none.
    var loadClient: String? = nil

    /// The sampler's interval when the scenario turns sampling off: the first and last samples still come.
    static let idleIntervalNanoseconds: Int64 = 1_000_000_000

    /// The agent's sampling interval in the program.
    var samplerIntervalNanoseconds: Int64 {
        spec.samplingIntervalNanoseconds > 0 ? spec.samplingIntervalNanoseconds : Self.idleIntervalNanoseconds
    }

    func run() -> CaseOutcome {
        guard let program = spec.program else { return .notMeasured(reason: "the case names no program") }
        // The child is forked from this process: until it execs, its resident set is this process's, and
        // the kernel's high-water mark (`ru_maxrss`) keeps that. Read now, it tells the program's own peak from ours.
        let harnessRSSBytes = (try? KernelMemory.status().rssBytes) ?? 0
        let origin = MonotonicClock.nanoseconds()
        let child: ChildProcess
        let waited: BoundedWait
        var heldHeapGraph: HeapGraphSummary?
        var served: ServedRun?
        do {
            if let plan = program.server {
                if let problem = serverProblem(plan) { return problem }
                (child, waited, served) = try serve(program, plan, origin: origin)
            } else {
                (child, waited, heldHeapGraph) = try runToEnd(program, origin: origin)
            }
        } catch {
            return .notMeasured(reason: error.description)
        }
        // Killed at the timeout, the program has no end of its own, but the kernel still says what it used.
        let (ended, usage) = (waited.endedWithinBound, waited.usage)
        // The record (exact figures, stacks) is read under one name whatever the program's pid was.
        rename(work.record(of: child.pid), work.record(of: nil))
        let root: ProgramSamples
        switch startedSamples(child.pid, executable: program.executable) {
        case .success(let samples): root = samples
        case .failure(let reason): return .notMeasured(reason: reason.description)
        }
        // Every process the program started (a script's commands, a build's compilers) streams its own samples.
        let others = ProgramSamples.readOthers(in: work.root, except: child.pid).filter { !$0.rows.isEmpty }
        let samples = ProgramSamples.tree(root: root, others: others)
        var programReport = report(program, termination: ended?.termination, processCount: 1 + others.count)
        let exact = exactCounts(started: child.pid, others: others)
        programReport.processPeaks = exact.processes
        let heapGraph = spec.heapGraph.map { _ in
            heldHeapGraph
                ?? heapGraphAtExit(pid: child.pid, termination: ended?.termination, generations: served?.heap)
        }
        let measurements = ProgramMeasurements.build(
            samples, usage: usage, harnessRSSBytes: harnessRSSBytes, exact: exact.figures, report: programReport,
            requestedIntervalNanoseconds: spec.samplingIntervalNanoseconds, phases: served?.phases,
            metrics: (served?.metrics ?? [])
                + (served?.leakMetrics(heapGraph ?? nil, suppressions: spec.suppressions ?? []) ?? [])
        ).adding(heapGraph: heapGraph ?? nil)
        guard let ended else {
            return .timedOut(limitNanoseconds: spec.timeoutNanoseconds, measurements: measurements)
        }
        if let invisible = ProgramMeasurements.invisibility(samples) {
            return .notMeasured(reason: "\(program.executable): \(invisible)")
        }
        if let served, let plan = program.server {
            return outcome(of: ended.termination, served: served, plan: plan, measurements: measurements)
        }
        return outcome(of: ended.termination, measurements: measurements)
    }

    /// The outcome of a program that ended by itself: its exit status or signal.
    func outcome(of termination: TerminationStatus, during phase: String? = nil, measurements: CaseMeasurements)
        -> CaseOutcome
    {
        let during = phase.map { " during phase '\($0)'" } ?? ""
        switch termination {
        case .exited(0):
            return .completed(measurements: measurements)
        case .exited(let status):
            let tail = ChildOutput(path: work.stderr).failureMessage
            return .failed(
                reason: "exited with status \(status)\(during)" + (tail.isEmpty ? "" : ": \(tail)"),
                measurements: measurements)
        case .signaled(let signal):
            var crash = CaseCrash(signal: signal, stderr: ChildOutput(path: work.stderr))
            if let phase {
                crash.message = "during phase '\(phase)'" + (crash.message.isEmpty ? "" : ": \(crash.message)")
            }
            return .crashed(crash: crash, measurements: measurements)
        }
    }

    /// The launcher's environment plus the agent's sampler, sample stream, record and clock, and the socket the agent
    /// waits on at exit for the heap capture's reader (`hold`).
    func agentEnvironment(hold: String? = nil, origin: Int64 = MonotonicClock.nanoseconds()) -> [String: String] {
        var variables = environment
        variables["MEMHARNESS_AGENT_INTERVAL_NS"] = String(samplerIntervalNanoseconds)
        variables["MEMHARNESS_AGENT_SAMPLES"] = "\(work.root)/samples.%p"
        variables["MEMHARNESS_AGENT_ORIGIN_NS"] = String(origin)
        // CPython serves objects up to 512 bytes from arenas it maps itself (pymalloc), which jemalloc never
        // sees; with PYTHONMALLOC=malloc every object is a malloc (as memray and pytest-memray advise for
        // leaks). A value the user set is kept.
        if variables["PYTHONMALLOC"] == nil { variables["PYTHONMALLOC"] = "malloc" }
        if recordsExactCounts { variables["MEMHARNESS_AGENT_RECORD"] = "\(work.root)/record.%p" }
        // A server's load steps count every allocation: jemalloc's own counts follow its thread caches, not calls.
        if spec.program?.server?.hasLoadSteps == true { variables["MEMHARNESS_AGENT_EXACT"] = "1" }
        if spec.heapGraph != nil { variables["MEMHARNESS_AGENT_HEAP_AT_EXIT"] = heapCapturePattern }
        if let hold { variables["MEMHARNESS_AGENT_HOLD_AT_EXIT"] = hold }
        return variables
    }

    /// Starts the program and waits for it (at most the case's timeout). Its output goes to the case's folder; the
    /// first measured run of a program that passes its output through writes to this process's standard output as it
    /// runs, and its standard error to both this process's and the folder's (whose last lines the report quotes).
    /// With a heap graph, the program is held at its exit while its capture is named from its memory: that graph
    /// comes back with it (nil when the program was not held).
    func runToEnd(_ program: ProgramInvocation, origin: Int64) throws(ChildProcessError)
        -> (ChildProcess, BoundedWait, HeapGraphSummary?)
    {
        let passThrough = program.passesOutputThrough && spec.repetition == 1 && spec.instrumentation == nil
        let stdout = passThrough ? -1 : open(work.stdout, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let stderr = open(work.stderr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            if stdout >= 0 { close(stdout) }
            if stderr >= 0 { close(stderr) }
        }
        let tee = passThrough && stderr >= 0 ? try OutputTee(copyingTo: [STDERR_FILENO, stderr]) : nil
        let hold = spec.heapGraph != nil ? ExitHold<HeapGraphSummary>() : nil
        defer { _ = hold?.finish() }
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(
                path: program.executable, arguments: program.arguments,
                environment: agentEnvironment(hold: hold?.name, origin: origin),
                stdout: passThrough ? STDOUT_FILENO : (stdout >= 0 ? stdout : nil),
                stderr: tee?.input ?? (stderr >= 0 ? stderr : nil), workingDirectory: program.workingDirectory)
        } catch {
            tee?.finish()
            throw error
        }
        hold?.serve(program: child.pid) { [self] pid in
            FileManager.default.fileExists(atPath: heapCapturePath(of: pid))
                ? heapGraphAtExit(pid: pid, memory: .process(pid: pid)) : nil
        }
        // The child holds its own copy of the pipe now; the copy stops at the end of what it (and its group) wrote.
        tee?.closeInput()
        defer { tee?.finish() }
        let waited = try child.wait(upTo: spec.timeoutNanoseconds)
        return (child, waited, hold?.finish())
    }

    /// The exact figures of the program (the sum over its processes for a tree, see `treeExact`) and, for a tree
    /// whose processes write records, each process's, the started one first.
    func exactCounts(
        started: Int32, others: [ProgramSamples]
    ) -> (figures: ExactPeakValues?, processes: [ProcessExactPeak]?) {
        // Exact counts are per process (each writes its record): a tree's exact peak is their sum, an upper bound.
        let processes =
            [ProgramMeasurements.processPeak(processID: Int(started), recordFile: work.record(of: nil))]
            + others.compactMap(\.processID).sorted().map {
                ProgramMeasurements.processPeak(processID: Int($0), recordFile: work.record(of: $0))
            }
        let figures = ProgramMeasurements.treeExact(processes)
        return (figures, !others.isEmpty && recordsExactCounts ? processes : nil)
    }

    /// The sample stream of the process started as `pid`, or why there is none to measure with.
    func startedSamples(_ pid: Int32, executable: String) -> Result<ProgramSamples, NotMeasured> {
        let path = work.programSamples(of: pid)
        do {
            guard let samples = try ProgramSamples.read(path), !samples.rows.isEmpty else {
                return .failure(
                    NotMeasured(
                        description: "the agent did not load into \(executable): it ignores LD_PRELOAD (statically "
                            + "linked, or setuid) or cleared it before starting; its allocations cannot be seen"))
            }
            return .success(samples)
        } catch {
            return .failure(NotMeasured(description: "\(path): \(error)"))
        }
    }

    /// Why a program could not be measured, in words for its row.
    struct NotMeasured: Error, CustomStringConvertible {
        var description: String
    }

    /// True when every process of the program writes a record with its exact counts (stacks imply counting).
    var recordsExactCounts: Bool { spec.peakMode == .exact || spec.attribution != nil }

    func report(_ program: ProgramInvocation, termination: TerminationStatus?, processCount: Int) -> ProgramReport {
        ProgramReport(
            commandLine: program.commandLine, termination: termination,
            stderrTail: ChildOutput(path: work.stderr).lastLines(10), processCount: processCount)
    }
}

/// The agent's sample stream of one process (`memharness-agent-samples 1`).
struct ProgramSamples {
    /// One `s` line: time (ns since the origin), the six jemalloc figures, RSS, nmalloc, the anonymous part of
    /// the RSS, then the exact live bytes, allocation calls, bytes allocated and live high since the last line; -1
    /// where unknown.
    struct Row: Equatable {
        var time: Int64
        var stats: AllocatorStatsValues
        var rss: Int
        var mallocCount: Int
        /// The anonymous resident set (RSS less file-backed and shared pages), bytes; nil in streams written
        /// before the agent sampled it.
        var anonymousRSS: Int? = nil
        /// The agent's exact counts; nil when it does not count exactly (or wrote a stream without them).
        var exact: ExactCounts? = nil
        /// The highest exact live bytes since the previous row (the agent resets its mark at each row): no high
        /// between two samples is lost, whatever the interval; nil without exact counts.
        var exactHighLiveBytes: Int64? = nil
    }
    var rows: [Row] = []
    /// The resident set explained (`r` lines), in the order written.
    var residentExplained: [ResidentBreakdown] = []
    /// The status the program passed to `exit` (the `x` line); nil when it ended otherwise.
    var exitStatus: Int?
    /// The malloc serving the process (the `a` line); nil in streams written before the agent said.
    var allocator: Allocator?
    /// For the streams of a process tree merged into one, the rows of the process started; nil otherwise.
    var startedProcessRowCount: Int?
    /// The process that wrote the stream, for the streams `readOthers` reads; nil otherwise.
    var processID: Int32?

    /// The streams of every process in `folder` other than `pid`'s (`samples.<pid>` files), in no order.
    static func readOthers(in folder: String, except pid: Int32) -> [ProgramSamples] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { name -> ProgramSamples? in
            guard name.hasPrefix("samples."), let other = Int32(name.dropFirst(8)), other != pid,
                var samples = try? read("\(folder)/\(name)")
            else { return nil }
            samples.processID = other
            return samples
        }
    }

    /// The stream at `path`; nil when there is none (the caller reports that the agent did not load into the
    /// program); throws when its first line is not the agent's samples header this memharness reads.
    static func read(_ path: String) throws(AgentFileHeader.Problem) -> ProgramSamples? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        // A stream read while its process runs may end in a line still being written: only whole lines count.
        let lines = text[..<(text.lastIndex(of: "\n") ?? text.startIndex)].split(separator: "\n")
        if let problem = AgentFileHeader.problem(firstLine: lines.first ?? "", expected: .samples) { throw problem }
        var samples = ProgramSamples()
        for line in lines.dropFirst() { samples.add(line: line) }
        return samples
    }

    /// Adds one whole line of a stream (after its header): an `s`, `r`, `a` or `x` line; others are skipped.
    mutating func add(line: Substring) {
        let fields = line.split(separator: " ")
        if fields.first == "s", fields.count >= 10 {
            let values = fields.dropFirst().map { Int($0) ?? -1 }
            rows.append(
                Row(
                    time: Int64(values[0]),
                    stats: AllocatorStatsValues(
                        allocatedBytes: max(values[1], 0), activeBytes: max(values[2], 0),
                        residentBytes: max(values[3], 0), mappedBytes: max(values[4], 0),
                        retainedBytes: max(values[5], 0), metadataBytes: max(values[6], 0)),
                    rss: max(values[7], 0), mallocCount: values[8],
                    anonymousRSS: values.count > 9 && values[9] >= 0 ? values[9] : nil,
                    exact: values.count > 12 && values[10...12].allSatisfy({ $0 >= 0 })
                        ? ExactCounts(
                            liveBytes: Int64(values[10]), allocationCalls: Int64(values[11]),
                            allocatedBytes: Int64(values[12])) : nil,
                    exactHighLiveBytes: values.count > 13 && values[13] >= 0 ? Int64(values[13]) : nil))
        } else if fields.first == "r", var breakdown = Self.residentBreakdown(fields) {
            if allocator == .glibc, fields.count >= 17 {
                breakdown.allocator = .glibc
                breakdown.releasableBytes = Int(fields[15]).map { max($0, 0) }
                breakdown.arenaCount = Int(fields[16])
            }
            residentExplained.append(breakdown)
        } else if fields.first == "a", fields.count >= 2 {
            allocator = Allocator(rawValue: String(fields[1]))
        } else if fields.first == "x", fields.count >= 3 {
            exitStatus = Int(fields[2])
        }
    }

    /// One `r` line: time, point (`h` a high, `e` the end), the resident set after and before, jemalloc's allocated,
    /// active, resident, metadata, dirty and muzzy bytes, then mapped files, stacks, other anonymous and jemalloc's
    /// pages per the kernel (-1: unknown); nil for a line this memharness cannot read.
    static func residentBreakdown(_ fields: [Substring]) -> ResidentBreakdown? {
        guard fields.count >= 15, let time = Int64(fields[1]), fields[2] == "h" || fields[2] == "e" else { return nil }
        let values = fields.dropFirst(3).compactMap { Int($0) }
        guard values.count >= 12, values[0] > 0 else { return nil }
        return ResidentBreakdown(
            point: fields[2] == "e" ? .end : .peak, timeNanoseconds: time, measuredBytes: values[0],
            measuredBeforeBytes: values[1], liveHeapBytes: max(values[2], 0),
            activeBeyondAllocatedBytes: max(values[3] - values[2], 0), dirtyBytes: max(values[6], 0),
            muzzyBytes: max(values[7], 0), allocatorPagesBytes: values[11] >= 0 ? values[11] : nil,
            allocatorReportedResidentBytes: max(values[4], 0), stacksBytes: values[9], mappedFilesBytes: values[8],
            otherAnonymousBytes: values[10])
    }

    /// The exact high of the live bytes from `start` to `end` (ns since the origin): the live bytes at the last row
    /// at or before `start`, and the highs of the rows from there to the first row at or after `end` (a row's high covers
    /// the time since the row before it, so the span is covered whole, and up to an interval on either side). Nil
    /// without exact highs, or for a tree's merged stream (its rows are several processes').
    func exactHighLiveBytes(from start: Int64, to end: Int64) -> Int? {
        guard startedProcessRowCount == nil else { return nil }
        let first = rows.lastIndex { $0.time <= start } ?? rows.startIndex
        guard first < rows.endIndex, let level = rows[first].exact?.liveBytes else { return nil }
        let last = rows[first...].firstIndex { $0.time >= end } ?? rows.endIndex - 1
        let highs = rows[first...last].dropFirst().map(\.exactHighLiveBytes)
        guard !highs.isEmpty, highs.allSatisfy({ $0 != nil }) else { return nil }
        return Int(max(level, highs.compactMap { $0 }.max() ?? level))
    }

    /// The resident set explained at its highest explained point and at the end (either missing when not written).
    var residentAtPeakAndEnd: [ResidentBreakdown] {
        // The highest; of equals the first read while the set held still (a high read while it moved is read again
        // once it settles), else the latest.
        let highs = residentExplained.filter { $0.point == .peak }
        let top = highs.map(\.measuredBytes).max()
        let equals = highs.filter { $0.measuredBytes == top }
        let peak = equals.first { $0.measuredBeforeBytes == $0.measuredBytes } ?? equals.last
        let end = residentExplained.last { $0.point == .end }
        return [peak, end].compactMap { $0 }
    }
}

/// Copies what a child writes into a pipe to several descriptors as it comes (a `tee`), on a thread of its own.
final class OutputTee: @unchecked Sendable {
    // Safety: `input` is written in init and by `closeInput`, both on the thread that made the tee; the copying thread
    // touches only `read`, `targets` and the atomic `stopping`.
    private(set) var input: Int32
    private let read: Int32
    private let targets: [Int32]
    private let done = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)

    /// How long `finish` waits for the pipe's other writers (a process the program started in a session of its own)
    /// once the program has ended: what they write after that is not copied.
    static let drainNanoseconds: Int64 = 2_000_000_000

    /// A pipe whose write end (`input`) is for the child; what comes out goes to every descriptor of `targets`.
    init(copyingTo targets: [Int32]) throws(ChildProcessError) {
        (read, input) = try ChildProcess.pipe()
        self.targets = targets
        Thread.detachNewThread { [self] in
            copy()
            done.signal()
        }
    }

    /// Closes this process's copy of the write end (the child keeps its own).
    func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// Waits until every writer has closed the pipe and everything was copied (at most `drainNanoseconds`), then
    /// closes the read end.
    func finish() {
        closeInput()
        if done.wait(timeout: .now() + .nanoseconds(Int(Self.drainNanoseconds))) == .timedOut {
            stopping.store(true, ordering: .relaxed)
            done.wait()  // the copy looks at `stopping` at least every 50 ms
        }
        close(read)
    }

    private func copy() {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var poller = pollfd(fd: read, events: Int16(POLLIN), revents: 0)
        while !stopping.load(ordering: .relaxed) {
            guard poll(&poller, 1, 50) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(read, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { return }
            for target in targets {
                buffer.withUnsafeBytes { write($0, count: count, to: target) }
            }
        }
    }

    /// Writes the first `count` bytes; a target that cannot take them (a closed terminal) is skipped.
    private func write(_ bytes: UnsafeRawBufferPointer, count: Int, to target: Int32) {
        var offset = 0
        while offset < count {
            let written = Glibc.write(target, bytes.baseAddress?.advanced(by: offset), count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
