import FileIO
import Foundation
import HarnessModel
import Reports
import Synchronization

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// What a report folder holds after a fault.
enum FolderVerdict: Equatable, CustomStringConvertible {
    /// No folder.
    case absent
    /// The report that was there before, byte for byte.
    case previous
    /// One complete run: every file is what its run.json renders, byte for byte, and nothing else is there.
    case complete(generatedAt: String)
    /// Anything else: files of two runs, a missing or truncated file, a stray file.
    case mixed(String)

    var description: String {
        switch self {
        case .absent: return "absent"
        case .previous: return "the previous report"
        case .complete(let time): return "a complete run of \(time)"
        case .mixed(let reason): return "mixed or half-written: \(reason)"
        }
    }
}

/// One trial of a fault: a folder of its own under the temporary directory with its scenarios, the harness's
/// stdout and stderr, and `Reports/out` as the report folder (under a folder named Reports, so the run also
/// rewrites `Reports/index.md`); a unique marker in the harness's environment finds every process it started.
final class Trial {
    /// Unique per trial; in the folder's name and in the harness's environment (`MEMHARNESS_FAULT_TRIAL`).
    let marker: String
    let root: String
    var reports: String { "\(root)/Reports" }
    var out: String { "\(reports)/out" }
    /// The files of the report placed in `out` before the run, when there was one.
    private(set) var previous: [String: Data]?
    /// A file system mounted inside the trial's folder, unmounted at the end.
    var mountPoint: String?

    init() throws {
        marker = "memharness-fault-\(UUID().uuidString.prefix(13).lowercased())"
        root = FileManager.default.temporaryDirectory.appendingPathComponent(marker).path
        try FileManager.default.createDirectory(atPath: "\(root)/Reports", withIntermediateDirectories: true)
    }

    deinit {
        // Whatever a failed trial left running is ended here (the trial has already counted it).
        for entry in ProcessTable.processes(marked: marker) where entry.group > 1 {
            kill(-entry.group, SIGKILL)
            kill(entry.pid, SIGKILL)
        }
        if let mountPoint { umount2(mountPoint, Int32(MNT_DETACH)) }
        // The test's own folder: nothing else depends on its removal.
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Writes a scenario file into the trial's folder and returns its path.
    func scenario(_ yaml: String, name: String = "scenario.yaml") throws -> String {
        let path = "\(root)/\(name)"
        try yaml.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    /// Places a complete earlier report in `out` (`folder`: where, default `out`) and remembers its files.
    func placePrevious(at folder: String? = nil) throws {
        let files = try PreviousReport.files()
        let target = folder ?? out
        for (path, data) in files {
            let url = URL(fileURLWithPath: "\(target)/\(path)")
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        previous = files
    }

    var stdoutPath: String { "\(root)/stdout.txt" }
    var stderrPath: String { "\(root)/stderr.txt" }
    // A stream that was closed or a pipe left no file: nothing was captured, which "" says.
    var stdoutText: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderrText: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Starts `memharness ARGUMENTS` with the trial's marker in its environment.
    func start(
        _ arguments: [String], environment: [String: String?] = [:], stdout: Stream? = nil, stderr: Stream? = nil,
        executable: String = HarnessProcess.binary, blockedSignals: [Int32] = []
    ) throws -> HarnessProcess {
        var variables = environment
        variables["MEMHARNESS_FAULT_TRIAL"] = marker
        return try HarnessProcess(
            arguments, executable: executable, environment: variables, stdout: stdout ?? .file(stdoutPath),
            stderr: stderr ?? .file(stderrPath), blockedSignals: blockedSignals)
    }

    /// What `folder` (default `out`) holds now.
    func verdict(of folder: String? = nil) -> FolderVerdict {
        let folder = folder ?? out
        guard FileManager.default.fileExists(atPath: folder) else { return .absent }
        let files: [String: Data]
        do {
            files = try Self.files(in: folder)
        } catch {
            return .mixed("unreadable: \(error)")
        }
        if let previous, files == previous { return .previous }
        let record: RunRecord
        let rendered: [(path: String, data: Data)]
        do throws(ReportError) {
            record = try ReportFolder.read(folder)
            rendered = try ReportBundle.files(record)
        } catch {
            return .mixed("run.json: \(error)")
        }
        let expected = Dictionary(rendered.map { ($0.path, $0.data) }, uniquingKeysWith: { first, _ in first })
        if let stray = files.keys.sorted().first(where: { expected[$0] == nil }) {
            return .mixed("\(stray) is not a file of the run in run.json")
        }
        if let missing = expected.keys.sorted().first(where: { files[$0] == nil }) {
            return .mixed("\(missing) is missing")
        }
        if let differing = expected.keys.sorted().first(where: { files[$0] != expected[$0] }) {
            return .mixed("\(differing) is not what run.json renders (another run's, or cut short)")
        }
        return .complete(generatedAt: record.report.generatedAt)
    }

    /// Every regular file under `folder`, by relative path.
    static func files(in folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return files }
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = "\(folder)/\(relative)"
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                continue
            }
            files[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return files
    }

    /// The temporary files run `pid` left: its working folder, staging folders and lock beside the report.
    func residue(of pid: pid_t) -> [String] {
        let temporary = FileManager.default.temporaryDirectory.path
        // A folder that cannot be listed holds nothing this check could name.
        let working = ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [])
            .filter { $0.hasPrefix("memharness-run-\(pid)-") }.map { "\(temporary)/\($0)" }
        let beside = ((try? FileManager.default.contentsOfDirectory(atPath: reports)) ?? [])
            .filter { ($0.hasPrefix(".out.") && $0 != ".out.journal") || $0.hasPrefix(".index.md.") }
            .map { "\(reports)/\($0)" }
        return working + beside
    }

    /// Waits at most `seconds` for the runs `pids` to leave no process and no temporary file behind, and says
    /// what is still there then.
    /// The finished cases an interrupted run keeps for `--resume` (`.out.journal/`): not residue, but
    /// only there while there is something to resume.
    var journal: String { "\(reports)/.out.journal" }

    func leftovers(of pids: [pid_t], within seconds: Double) -> (processes: [String], files: [String]) {
        var processes: [String] = []
        var files: [String] = []
        _ = Deadline.poll(seconds: seconds, interval: 0.01) {
            processes = ProcessTable.processes(marked: marker).map(\.description)
            files = pids.flatMap { residue(of: $0) }
            return processes.isEmpty && files.isEmpty
        }
        return (processes, files)
    }
}

/// A complete report made once by a real run, placed in trials as "the previous report".
enum PreviousReport {
    private static let cache = Mutex<[String: Data]?>(nil)

    static func files() throws -> [String: Data] {
        try cache.withLock { stored in
            if let stored { return stored }
            let made = try make()
            stored = made
            return made
        }
    }

    private static func make() throws -> [String: Data] {
        let trial = try Trial()
        let scenario = try trial.scenario(Scenarios.quick)
        let run = try trial.start(["run", scenario, "--out", trial.out, "--quiet"])
        let ending = try run.finish(within: 60, "the previous report's run")
        guard ending == .exited(0) else {
            throw FaultError("the previous report's run ended with \(ending): \(trial.stderrText)")
        }
        return try Trial.files(in: trial.out)
    }
}
