import ChildProcesses
import FileIO
import Foundation
import HarnessModel
import Reports
import Runner
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// Do large runs survive? A sweep of 1,000 short cases, run by `memharness run` three ways: uninterrupted,
/// interrupted by SIGINT once half its cases are in the journal, and resumed with `--resume`. Each time the
/// parent's peak resident memory is read (its `VmHWM`, polled), and the resumed report is checked against
/// the uninterrupted one: every case once, in the same order, the journal's results carried over as they
/// were, and files that are the renderings of the record. The two real runs measure different processes,
/// so their figures differ; whether resuming changes anything but the figures is then shown exactly: the
/// uninterrupted run's own outcomes are replayed in this process, once straight through and once stopped
/// halfway and resumed from the journal, with the clock fixed, and every file of the two reports compared
/// byte for byte.
enum SweepBenchmark {
    /// Short cases: a hold of 1-100 KiB, allocated and released, no settle; they may run side by side.
    static let scenario = """
        scenario: sweep
        description: Short calibration cases for the 1,000-case sweep benchmark.
        workload: calibration
        parameters:
          holdSize: 1KiB
        strategies: [hold-large]
        steps:
          - allocate
          - release
        repetitions: 10
        settle: 0ms
        parallel: true

        """

    /// 100 points (the most a sweep takes) of 10 repetitions.
    static let sweep = "holdSize=" + (1...100).map { "\($0)KiB" }.joined(separator: ",")
    static let plannedCases = 1_000
    /// The interrupted run is stopped once its journal holds this many cases.
    static let interruptAfter = 500

    struct Measured {
        var uninterrupted: ParentRun
        var small: ParentRun
        var interrupted: ParentRun
        var journaled: Int
        var resumed: ParentRun
        /// Progress lines of the resumed run: cases taken from the journal, and cases it ran.
        var carried: Int
        var ranOnResume: Int
        var checks: [(String, Bool)]
        var replay: ReplayComparison
    }

    static func run(_ environment: BenchEnvironment) throws -> String {
        let directory = environment.scratch.appendingPathComponent("sweep").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = "\(directory)/sweep.yaml"
        try scenario.write(toFile: file, atomically: true, encoding: .utf8)
        func arguments(_ out: String, sweep: String = Self.sweep, quiet: Bool = true) -> [String] {
            ["run", file, "--set", sweep, "--out", "\(directory)/\(out)", quiet ? "--quiet" : "--verbose"]
        }
        let small = try ParentRun.start(environment.plainBinary, arguments("small", sweep: "holdSize=1KiB,2KiB"))
            .finish()
        let uninterrupted = try ParentRun.start(environment.plainBinary, arguments("whole")).finish()
        let journal = "\(directory)/.resumed.journal"
        let interrupted = try ParentRun.start(environment.plainBinary, arguments("resumed")).finish(
            interruptingOnce: { journaledCases(in: journal) >= interruptAfter })
        let journaled = try JournalEntries.read(journal)
        let progress = "\(directory)/resume-progress.txt"
        let resumed = try ParentRun.start(
            environment.plainBinary, arguments("resumed", quiet: false) + ["--resume"], stderr: progress
        ).finish()
        // One line per case, `[i/N] …`; the ones the journal gave end with "(resumed)".
        let lines = ((try? String(contentsOfFile: progress, encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { $0.hasPrefix("[") }
        let carried = lines.filter { $0.hasSuffix("finished before the interruption (resumed)") }.count
        for run in [small, uninterrupted, resumed] where run.exitStatus != 0 {
            throw BenchError(
                path: file, reason: "`memharness \(run.arguments.joined(separator: " "))` exited \(run.exitStatus)")
        }
        let whole = try ReportFolder.read("\(directory)/whole")
        let resumedRecord = try ReportFolder.read("\(directory)/resumed")
        let measured = Measured(
            uninterrupted: uninterrupted, small: small, interrupted: interrupted, journaled: journaled.count,
            resumed: resumed, carried: carried, ranOnResume: lines.count - carried,
            checks: try checks(
                whole: whole, resumed: resumedRecord, folder: "\(directory)/resumed", journaled: journaled,
                journalLeft: FileManager.default.fileExists(atPath: journal)),
            replay: try ReplayComparison.run(whole, scenarioFile: file, sweep: sweep, directory: directory))
        return render(measured, environment: whole.report.environment)
    }

    /// The finished cases in a journal folder (its `case-<n>.json` files).
    static func journaledCases(in journal: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: journal)) ?? []
        return names.filter { $0.hasPrefix("case-") && $0.hasSuffix(".json") }.count
    }

    /// What the resumed report must be, given the uninterrupted one and what the journal held.
    static func checks(
        whole: RunRecord, resumed: RunRecord, folder: String, journaled: [CaseKey: CaseResult], journalLeft: Bool
    ) throws -> [(String, Bool)] {
        let wholeCases = whole.report.scenarios.flatMap(\.cases)
        let resumedCases = resumed.report.scenarios.flatMap(\.cases)
        let byKey = Dictionary(resumedCases.map { (CaseKey($0), $0) }, uniquingKeysWith: { first, _ in first })
        let onDisk = ReportBundle.renderings(resumed).allSatisfy { path, data in
            FileManager.default.contents(atPath: "\(folder)/\(path)") == data
        }
        return [
            (
                "\(plannedCases) cases in both reports",
                wholeCases.count == plannedCases && resumedCases.count == plannedCases
            ),
            (
                "every case once, in the uninterrupted run's order",
                resumedCases.map(CaseKey.init) == wholeCases.map(CaseKey.init)
            ),
            ("every case completed", resumedCases.allSatisfy { $0.status == .ok }),
            (
                "the \(journaled.count) journaled results are in the resumed report as they were",
                !journaled.isEmpty && journaled.allSatisfy { byKey[$0.key] == $0.value }
            ),
            ("the same scenarios, sweep points and checks", sameShape(whole, resumed)),
            ("report.md, the CSVs and the charts are the renderings of the resumed run.json", onDisk),
            ("the journal is gone once the report is written", !journalLeft),
        ]
    }

    /// The same scenarios (names, strategies, steps), the same sweep points and the same checks with the same verdicts.
    static func sameShape(_ one: RunRecord, _ other: RunRecord) -> Bool {
        func shape(_ record: RunRecord) -> [String] {
            record.report.scenarios.map { "\($0.name) \($0.strategies) \($0.steps) \($0.repetitions)" }
                + (record.report.sweeps ?? []).map { "\($0.scenario) \($0.key) \($0.series.map(\.points.count))" }
                + record.checks.map { "\($0.kind) \($0.strategy) \($0.passed)" }
        }
        return shape(one) == shape(other)
    }
}

/// A case by what names it in a run.
struct CaseKey: Hashable {
    var scenario: String
    var strategy: String
    var repetition: Int

    init(scenario: String, strategy: String, repetition: Int) {
        self.scenario = scenario
        self.strategy = strategy
        self.repetition = repetition
    }

    init(_ result: CaseResult) {
        scenario = result.scenario
        strategy = result.strategy
        repetition = result.repetition
    }
}

/// The results a journal folder holds, by case.
enum JournalEntries {
    private struct Entry: Decodable {
        var result: CaseResult
    }

    static func read(_ journal: String) throws -> [CaseKey: CaseResult] {
        var results: [CaseKey: CaseResult] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: journal)
        where name.hasPrefix("case-") && name.hasSuffix(".json") {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(journal)/\(name)"))
            let result = try JSONDecoder().decode(Entry.self, from: data).result
            results[CaseKey(result)] = result
        }
        return results
    }
}

/// One `memharness` process run to its end, with its resident memory watched.
struct ParentRun {
    var arguments: [String]
    var child: ChildProcess
    var startNanoseconds: Int64
    /// Filled by `finish`.
    var exitStatus: Int32 = -1
    var wallSeconds = 0.0
    /// The largest `VmHWM` read from `/proc/PID/status`, polled every 10 ms, bytes: the parent alone.
    var polledPeakBytes = 0
    /// `wait4`'s `ru_maxrss`: the larger of the parent's peak and its largest case process's, bytes.
    var waitMaxRSSBytes = 0

    /// Starts `binary` with `arguments` (signals as a shell would leave them: none blocked or ignored), its
    /// standard output discarded and its standard error written to the file `stderr` (discarded without one).
    static func start(_ binary: String, _ arguments: [String], stderr: String? = nil) throws -> ParentRun {
        let descriptor = stderr.map { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        defer { if let descriptor, descriptor >= 0 { close(descriptor) } }
        let child = try ChildProcess.spawn(
            path: binary, arguments: arguments, environment: ProcessInfo.processInfo.environment, stderr: descriptor)
        return ParentRun(arguments: arguments, child: child, startNanoseconds: MonotonicClock.nanoseconds())
    }

    /// Polls the process until it exits (at most an hour; then it is killed), sending it SIGINT the first
    /// time `interruptingOnce` holds.
    func finish(interruptingOnce: () -> Bool = { false }) -> ParentRun {
        var run = self
        var interrupted = false
        let deadline = startNanoseconds + 3_600_000_000_000
        // A wait that fails ends the polling: the process is killed below, and the run shows exit status -1.
        var ended = (try? child.wait(timeoutNanoseconds: 0)) ?? nil
        while ended == nil && MonotonicClock.nanoseconds() < deadline {
            run.polledPeakBytes = max(run.polledPeakBytes, Self.peakResidentBytes(of: child.pid))
            if !interrupted && interruptingOnce() {
                child.send(SIGINT)
                interrupted = true
            }
            do {
                ended = try child.wait(timeoutNanoseconds: 10_000_000)
            } catch {
                break
            }
        }
        guard let ended = ended ?? child.kill() else { return run }
        run.wallSeconds = Double(MonotonicClock.nanoseconds() - startNanoseconds) / 1e9
        run.exitStatus = ended.termination.shellStatus
        run.waitMaxRSSBytes = ended.usage.peakRSSBytes
        return run
    }

    /// `VmHWM` of `pid`, bytes; 0 once it cannot be read (the process is ending).
    static func peakResidentBytes(of pid: pid_t) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}

extension SweepBenchmark {
    /// The parent's limit for a 1,000-case run, bytes.
    static let parentLimitBytes = 64 << 20

    static func render(_ measured: Measured, environment: EnvironmentInfo) -> String {
        var out = ["# Large runs: a 1,000-case sweep, interrupted and resumed", ""]
        out.append(
            "memharness \(environment.toolVersion). Other processes may share the machine (the load averages "
                + "above say how much), so wall times are an upper bound.")
        out.append("")
        out.append(
            "The sweep is `memharness run sweep.yaml --set \(sweep.prefix(28))…,100KiB`: 100 points × 10 repetitions, "
                + "\(plannedCases) cases, each a calibration hold of 1-100 KiB allocated and released in its own "
                + "process, two at a time (`parallel: true`, `--jobs` auto on \(environment.cpuCount) CPUs). The "
                + "parent's peak resident memory is its `VmHWM`, read from `/proc/PID/status` every 10 ms until it "
                + "exits. `wait4`'s maximum RSS is the kernel's high-water mark of the parent and of the case processes "
                + "it waited for, the largest of them: where it agrees with the parent's, no case was larger.")
        out.append("")
        out += runTable(measured)
        out += checkList(measured)
        out += replaySection(measured.replay)
        out += Bench.scenarioBlock(scenario)
        return out.joined(separator: "\n")
    }

    static func runTable(_ measured: Measured) -> [String] {
        func row(_ label: String, _ cases: String, _ run: ParentRun) -> String {
            "| \(label) | \(cases) | \(Bench.seconds(run.wallSeconds)) | "
                + "\(Units.formatBytes(Double(run.polledPeakBytes))) | \(Units.formatBytes(Double(run.waitMaxRSSBytes))) "
                + "| \(run.exitStatus) |"
        }
        let largest =
            [measured.uninterrupted, measured.interrupted, measured.resumed].map(\.polledPeakBytes).max() ?? 0
        return [
            "| Run | Cases it ran | Wall time | Parent's peak resident (VmHWM) | wait4 max RSS (largest of parent and cases) "
                + "| Exit status |",
            "|---|---:|---:|---:|---:|---:|",
            row("a 2-point sweep, for scale", "20", measured.small),
            row("uninterrupted", "\(plannedCases)", measured.uninterrupted),
            row(
                "interrupted: SIGINT once \(interruptAfter) cases were journaled", "\(measured.journaled) kept",
                measured.interrupted),
            row(
                "`--resume` of it", "\(measured.ranOnResume) (\(measured.carried) from the journal)", measured.resumed),
            "",
            "The parent's peak over the three 1,000-case runs: \(Units.formatBytes(Double(largest))), "
                + (largest < parentLimitBytes ? "under" : "**over**")
                + " the \(Units.formatBytes(Double(parentLimitBytes))) required; "
                + "\(Units.formatBytes(Double(largest - measured.small.polledPeakBytes))) above the 20-case run's, "
                + "whose peak is the binary itself (the Swift runtime, Foundation and every linked workload). Exit "
                + "status 130 is 128 + SIGINT: the interrupted run wrote no report and kept its finished cases for "
                + "`--resume`.",
            "",
        ]
    }

    static func checkList(_ measured: Measured) -> [String] {
        var out = ["The resumed report against the uninterrupted one:", ""]
        for (check, passed) in measured.checks { out.append("- \(passed ? "yes" : "**no**"): \(check)") }
        out.append(
            "- \(measured.carried == measured.journaled ? "yes" : "**no**"): the resumed run took the \(measured.journaled) "
                + "journaled cases from the journal and ran the other \(measured.ranOnResume)")
        out.append("")
        out.append(
            "The two real runs measured different processes: what differs between their reports is what they "
                + "measured (heap and resident readings, times, CPU, sample rows, peaks per phase), the date "
                + "(`generatedAt`) and the wall times (`elapsedNanoseconds`, each case's `wallNanoseconds`), and the "
                + "report text and charts that show them; the cases, their order, statuses, scenarios, sweep points "
                + "and checks are the same (above). The exact comparison holds the measurements still:")
        out.append("")
        return out
    }

    static func replaySection(_ replay: ReplayComparison) -> [String] {
        let verdict =
            replay.differing.isEmpty
            ? "identical: all \(replay.files) files, \(Units.formatBytes(Double(replay.bytes))) (run.json, report.md, "
                + "summary.csv, samples.csv, sweep.csv and the charts)"
            : "**different** in \(replay.differing.count) of \(replay.files) files: "
                + replay.differing.prefix(5).map { "`\($0)`" }.joined(separator: ", ")
        return [
            "Exact: the uninterrupted run's \(replay.plannedCases) outcomes replayed through the runner in one process "
                + "(its case queue, two jobs, its journal), with the clock fixed at 0 and the uninterrupted run's date, "
                + "machine and wall time: once straight through, and once stopped after \(replay.plannedCases / 2) "
                + "launches (\(replay.journaled) results journaled) and resumed from the journal, which ran "
                + "\(replay.ranOnResume) cases. The two reports are \(verdict).",
            "",
        ]
    }
}
