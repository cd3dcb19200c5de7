import ChildProcesses
import Foundation

#if os(Linux)
    import Glibc
#endif

/// How `memharness profile` runs a corpus program: the options of one mode.
public enum CorpusMode: String, Sendable, CaseIterable {
    /// The default: the agent's sampler, every millisecond.
    case sampled
    /// `--peak exact`: every allocation counted.
    case exact = "--peak exact"
    /// `--attribute`: allocation stacks sampled, their live set at the exact peak.
    case attribute = "--attribute"
    /// `--heap-graph`: every live block tracked, the heap captured at exit.
    case heapGraph = "--heap-graph"

    /// The options it adds to `memharness profile`.
    public var options: [String] {
        switch self {
        case .sampled: return []
        case .exact: return ["--peak", "exact"]
        case .attribute: return ["--attribute"]
        case .heapGraph: return ["--heap-graph"]
        }
    }
}

/// One run of a corpus program, plain or under `memharness profile`, and what it left behind.
public struct CorpusRun: Sendable {
    /// How it ended (for a profiled run: the program's end, from its row, and memharness's own status).
    public var status: Int32
    /// Its standard output, the scratch folder's path written `{dir}`.
    public var stdout: String
    /// True when it outlived the time limit and was killed.
    public var hung: Bool
    public var seconds: Double
    /// Files or folders of memharness (`memharness-*`, the names of everything the harness and its agent make there)
    /// left in the run's private TMPDIR: what the program leaves there itself (SwiftPM's lock files) is its own.
    public var residue: [String]
    /// Processes still alive that it started.
    public var orphans: [String]
    /// memharness's own stderr (for a profiled run), for the table's notes.
    public var stderr: String

    /// Runs `program` once: plainly when `memharness` is nil, else as `memharness profile MODE --out ... -- PROGRAM`,
    /// in a fresh scratch folder under `scratch` with a TMPDIR of its own and a marker in its environment that every
    /// process it starts inherits, so that leftovers of this run alone are found. `readReport` is given a profiled
    /// run's report folder before it is removed.
    public static func run(
        _ program: CorpusProgram, memharness: String?, mode: CorpusMode = .sampled, scratch: String,
        timeout: Duration = .seconds(300), readReport: (String) -> Void = { _ in }
    ) throws -> CorpusRun {
        let marker = "MEMHARNESS_CORPUS_RUN=\(UUID().uuidString)"
        let directory = "\(scratch)/\(UUID().uuidString)"
        let temporary = "\(directory)-tmp"
        try program.prepare(in: directory)
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: temporary)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = temporary
        let parts = marker.split(separator: "=", maxSplits: 1).map(String.init)
        environment[parts[0]] = parts[1]
        let command = program.commandLine(in: directory)
        let arguments: [String]
        let executable: String
        if let memharness {
            executable = memharness
            arguments = ["profile", "--out", "\(directory)-report"] + mode.options + ["--"] + command
        } else {
            executable = command[0]
            arguments = Array(command.dropFirst())
        }
        defer { try? FileManager.default.removeItem(atPath: "\(directory)-report") }
        let started = DispatchTime.now().uptimeNanoseconds
        // SIGTERM first at the bound: a build tool ends its own children then; SIGKILL and the group 10 s later.
        let ended = try ChildRun.run(
            executable, arguments, environment: environment, timeout: timeout, directory: directory,
            stopSignal: SIGTERM)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        // The program's own ending: memharness exits 1 for a failed row; the row says how the program ended.
        let status = memharness == nil ? ended.status : (programStatus(report: "\(directory)-report") ?? ended.status)
        if memharness != nil { readReport("\(directory)-report") }
        let leftovers = try? FileManager.default.contentsOfDirectory(atPath: temporary)
        return CorpusRun(
            status: status, stdout: ended.stdout.replacingOccurrences(of: directory, with: "{dir}"),
            hung: ended.timedOut, seconds: seconds,
            residue: (leftovers ?? []).filter { $0.hasPrefix("memharness") }.sorted(),
            orphans: Self.processes(marked: marker), stderr: ended.stderr)
    }

    /// The program's exit status (or 128 + its signal) from the first row of the report's summary.csv (its measured
    /// run); nil without one.
    static func programStatus(report folder: String) -> Int32? {
        guard let text = try? String(contentsOfFile: "\(folder)/summary.csv", encoding: .utf8) else { return nil }
        let rows = csvRows(text)
        guard let header = rows.first, let row = rows.dropFirst().first, row.count == header.count else { return nil }
        let field = Dictionary(zip(header, row), uniquingKeysWith: { first, _ in first })
        if let status = field["exit_status"].flatMap({ Int32($0) }) { return status }
        return field["signal"].flatMap { Int32($0) }.map { 128 + $0 }
    }

    /// The rows of a CSV text (RFC 4180: CRLF or LF line ends; a field in double quotes may hold commas, line breaks
    /// and doubled quotes).
    static func csvRows(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var previousWasQuote = false
        for character in text {
            if quoted {
                if character == "\"" {
                    quoted = false
                    previousWasQuote = true
                } else {
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"":
                // A quote right after a closing one is a doubled quote inside the field.
                if previousWasQuote { field.append("\"") }
                quoted = true
            case ",":
                row.append(field)
                field = ""
            case "\n", "\r\n":  // summary.csv ends its lines with CRLF, one Character in Swift
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            default:
                field.append(character)
            }
            previousWasQuote = false
        }
        if !field.isEmpty || !row.isEmpty { rows.append(row + [field]) }
        return rows
    }

    /// Processes alive now whose environment holds `marker` (a `NAME=value` pair), zombies left out.
    static func processes(marked marker: String) -> [String] {
        let own = getpid()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name -> String? in
            guard let pid = pid_t(name), pid != own,
                let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
                environment.split(separator: 0).contains(where: { $0.elementsEqual(marker.utf8) }),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"),
                stat[stat.index(after: close)...].split(separator: " ").first != "Z"
            else { return nil }
            let commandLine = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
            return "\(pid): \(commandLine.replacingOccurrences(of: "\0", with: " "))"
        }
    }
}
