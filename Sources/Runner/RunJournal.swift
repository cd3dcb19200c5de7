import FileIO
import Foundation
import HarnessModel
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// The finished cases of a run into one output folder, kept as they finish in a hidden sibling
/// (`.OUT.journal/`): a run stopped by a signal (or killed) leaves it, and `memharness run --resume`
/// runs only the cases it does not hold, then writes the same report an uninterrupted run would.
/// The report, once written, makes it unnecessary: a run that writes its report removes it.
///
/// The journal holds the plan it belongs to (`plan.jsonl`, every planned case's spec, one JSON line each)
/// and one file per finished case (`case-<n>.json`: its spec and its `CaseResult`; further repetitions of
/// `repetitions: auto` included), each written to a temporary name and renamed, so a file present is a
/// complete result. It is only touched while the output folder's lock is held.
///
/// The parent of a large run holds the report's results and little else: the plan is encoded one case at a
/// time (encoded at once, a 1,000-case sweep's plan took the parent's peak from 42 to 46-55 MiB resident).
public final class RunJournal: Sendable {
    /// The journal folder.
    let path: String
    /// Results of an earlier, interrupted run of the same plan, by case (empty unless resuming).
    private let finished: [CaseSpec: CaseResult]
    /// The number of the next file a result is written to.
    private let written = Atomic<Int>(0)
    /// The planned cases, written as `plan.jsonl` with the first result.
    private let cases: [CaseSpec]
    /// Whether the folder and its plan are there: nil until the first result.
    private let opening = Mutex<Bool?>(nil)

    /// One finished case as the journal keeps it.
    private struct Entry: Codable {
        var spec: CaseSpec
        var result: CaseResult
    }

    /// The journal folder of `directory`: a hidden sibling.
    static func path(for directory: String) -> String {
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        return target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).journal").path
    }

    /// The number of finished cases an interrupted run into `directory` left; nil when there is none.
    static func interruptedCases(for directory: String) -> Int? {
        let folder = path(for: directory)
        // A journal that cannot be listed is as good as none: the next run starts it afresh.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        return names.filter { $0.hasPrefix("case-") && $0.hasSuffix(".json") }.count
    }

    /// Opens the journal of the run into `directory` for the planned `cases`. Resuming, it must hold the
    /// same plan (else `.resumeMismatch`) and its finished cases are kept; otherwise whatever an earlier run
    /// left is discarded. Nothing is written until the first result.
    public init(output directory: String, cases: [CaseSpec], resume: Bool) throws(RunError) {
        path = Self.path(for: directory)
        let planFile = "\(path)/\(Self.planName)"
        if resume {
            guard let data = FileManager.default.contents(atPath: planFile) else {
                throw .nothingToResume(output: directory)
            }
            // A plan that does not decode is a journal of another version: not this run's.
            let earlier = Self.decodePlan(data)
            guard let earlier, earlier == cases else {
                throw .resumeMismatch(output: directory, detail: Self.difference(earlier ?? [], cases))
            }
            finished = Self.readFinished(in: path)
            written.store(finished.count, ordering: .relaxed)
        } else {
            // An earlier journal is of a run the user chose not to resume.
            try? FileManager.default.removeItem(atPath: path)
            finished = [:]
        }
        self.cases = cases
    }

    /// Creates the folder and its plan with the first result: a run stopped before any case finished
    /// leaves no journal. Nil when they cannot be written (a full disk): results are then not kept.
    private func opened() -> Bool {
        opening.withLock { state in
            if let state { return state }
            let planFile = "\(path)/\(Self.planName)"
            let ready: Bool
            if FileManager.default.fileExists(atPath: planFile) {
                ready = true
            } else {
                do {
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                    try ReportFolder.replaceFile(try Self.encodePlan(cases), at: planFile)
                    ready = true
                } catch {
                    // A half-made journal is removed if it can be; `ready = false` keeps the run from using it either
                    // way.
                    try? FileManager.default.removeItem(atPath: path)
                    ready = false
                }
            }
            state = ready
            return ready
        }
    }

    /// The result an interrupted run kept for `spec`; nil when it did not finish it.
    func result(for spec: CaseSpec) -> CaseResult? { finished[spec] }

    /// Keeps `result`, the outcome of `spec`. A result that cannot be kept only costs a resume the
    /// re-run of that case: the run goes on.
    func record(_ result: CaseResult, of spec: CaseSpec) {
        // A result always encodes (every figure is a plain value).
        guard opened(), let data = try? JSONEncoder().encode(Entry(spec: spec, result: result)) else { return }
        let number = written.add(1, ordering: .relaxed).oldValue
        // Ignored on purpose (see above): a resume re-runs the case.
        try? ReportFolder.replaceFile(data, at: "\(path)/case-\(number).json")
    }

    /// Removes the journal: the report now holds everything it held.
    public func discard() {
        // Left behind only if the folder cannot be removed; the next run into the folder replaces it.
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The plan's file in the journal folder.
    static let planName = "plan.jsonl"

    /// `cases` as JSON lines, encoded one at a time: the encoder's tree of one case, not of the whole plan.
    static func encodePlan(_ cases: [CaseSpec]) throws -> Data {
        let encoder = JSONEncoder()
        var lines = Data()
        for spec in cases {
            lines.append(try encoder.encode(spec))
            lines.append(UInt8(ascii: "\n"))
        }
        return lines
    }

    /// The plan `encodePlan` wrote; nil when a line does not decode.
    static func decodePlan(_ data: Data) -> [CaseSpec]? {
        let decoder = JSONDecoder()
        var cases: [CaseSpec] = []
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let spec = try? decoder.decode(CaseSpec.self, from: line) else { return nil }
            cases.append(spec)
        }
        return cases
    }

    private static func readFinished(in path: String) -> [CaseSpec: CaseResult] {
        // An unreadable folder holds no results: every case runs again.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        var finished: [CaseSpec: CaseResult] = [:]
        for name in names where name.hasPrefix("case-") && name.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: "\(path)/\(name)") else { continue }
            // A damaged result is a case to run again.
            if let entry = try? JSONDecoder().decode(Entry.self, from: data) { finished[entry.spec] = entry.result }
        }
        return finished
    }

    /// The first case that differs between the journal's plan and this one, in words.
    private static func difference(_ earlier: [CaseSpec], _ now: [CaseSpec]) -> String {
        if earlier.isEmpty { return "its plan is unreadable (written by another version of memharness)" }
        if earlier.count != now.count { return "it planned \(earlier.count) cases, this run plans \(now.count)" }
        guard let index = earlier.indices.first(where: { earlier[$0] != now[$0] }) else { return "" }
        return "case \(index + 1) was \(earlier[index].label), with other settings than this run's \(now[index].label)"
    }
}
