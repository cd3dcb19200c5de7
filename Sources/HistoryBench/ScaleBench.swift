import FileIO
import Foundation
import HarnessModel
import History
import Reports
import WorkloadKit

/// A store of `runs` runs of 100 figures (5 scenarios × 5 strategies × 4 figures) with steps in a few series:
/// the time to write the records and build the index, to record one more run, and to write the history
/// report; and the report of two stores merged by copying against the one store holding both.
enum ScaleBench {
    static func run(runs: Int, keep: String?) throws -> String {
        let root =
            keep ?? FileManager.default.temporaryDirectory.appendingPathComponent("history-bench-\(getpid())").path
        // Cleanup at exit: a scratch folder that cannot be removed is temporary files, left to the system.
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: root) } }
        let store = try HistoryStore(path: "\(root)/store", create: true)
        var clock = ContinuousClock.now
        for index in 0..<runs { try store.add(record(index)) }
        let writing = clock.duration(to: .now)
        clock = .now
        try HistoryIndex.sync(store)
        let indexing = clock.duration(to: .now)
        var recordTimes: [Duration] = []
        for extra in 0..<5 {
            let start = ContinuousClock.now
            try store.add(record(runs + extra))
            try HistoryIndex.sync(store)
            recordTimes.append(start.duration(to: .now))
        }
        var showTimes: [Duration] = []
        var report = ""
        for _ in 0..<3 {
            let start = ContinuousClock.now
            report = try show(store, out: "\(root)/history")
            showTimes.append(start.duration(to: .now))
        }
        let merged = try mergedReport(store, root: root)
        let commands =
            try CommandBench.run(store: store.path, root: root)
            ?? "No `memharness` beside `history-bench`: the commands were not timed (`make bench-history` builds it).\n"
        return """
            ## Scale

            \(runs + 5) runs of 100 figures in one store (release build; library calls, as the commands make them).

            | Step | Time |
            |---|---:|
            | write \(runs) records | \(seconds(writing)) |
            | build the index from them (missing index) | \(seconds(indexing)) |
            | `record` one more run (write + index), median of 5 | \(seconds(median(recordTimes))) |
            | `show` (index read, 100 series analysed, history.md and 100 charts written), median of 3 | \(seconds(median(showTimes))) |

            Two stores holding the even and the odd runs, merged by copying records/ into a third: its history.md is \
            \(merged == report ? "identical" : "DIFFERENT") to the single store's.

            \(commands)
            """
    }

    static func show(_ store: HistoryStore, out: String) throws -> String {
        let analysis = HistoryAnalysis(try HistoryIndex.table(store))
        let files = HistoryReport.files(analysis)
        try ReportFolder.write(files, to: out, kind: HistoryReport.folderKind)
        return String(decoding: files[0].data, as: UTF8.self)
    }

    static func mergedReport(_ store: HistoryStore, root: String) throws -> String {
        let manager = FileManager.default
        let halves = try (0..<2).map { try HistoryStore(path: "\(root)/half\($0)", create: true) }
        for (position, id) in try store.recordIDs().enumerated() {
            try manager.copyItem(
                atPath: "\(store.path)/records/\(id).json", toPath: "\(halves[position % 2].path)/records/\(id).json")
        }
        for half in halves { try HistoryIndex.sync(half) }
        let merged = try HistoryStore(path: "\(root)/merged", create: true)
        for half in halves {
            for id in try half.recordIDs() {
                try manager.copyItem(
                    atPath: "\(half.path)/records/\(id).json", toPath: "\(merged.path)/records/\(id).json")
            }
        }
        return try show(merged, out: "\(root)/merged-history")
    }

    /// Run `index`: figures around fixed levels with 1% noise, a few series stepping at runs 2,000 and 7,000.
    static func record(_ index: Int) -> HistoryRecord {
        var generator = SeededRandom(seed: UInt64(index))
        var figures: [RecordedFigure] = []
        for scenario in 0..<5 {
            for strategy in 0..<5 {
                for (position, figure) in ["peakAllocated", "peakResident", "residue", "exactPeak"].enumerated() {
                    let level = Double((scenario + 1) * (strategy + 2) * (position + 3)) * 1_048_576
                    let stepped = (strategy == 1 && index >= 2000) || (scenario == 3 && index >= 7000)
                    let noise = Double.random(in: -0.01...0.01, using: &generator)
                    figures.append(
                        RecordedFigure(
                            key: SeriesKey(
                                scenario: "scenario-\(scenario)", strategy: "strategy-\(strategy)", figure: figure),
                            value: (level * (1 + noise + (stepped ? 0.1 : 0))).rounded(), repetitions: 3,
                            gated: position == 0, isBytes: true))
                }
            }
        }
        let time = Date(timeIntervalSince1970: 1_700_000_000 + Double(index) * 600)
        let formatter = ISO8601DateFormatter()
        let provenance = Provenance(
            commit: String(format: "%040x", index), branch: "main", time: formatter.string(from: time), machine: "bench"
        )
        return HistoryRecord(provenance: provenance, runAt: formatter.string(from: time), figures: figures)
    }

    static func median(_ durations: [Duration]) -> Duration { durations.sorted()[durations.count / 2] }

    static func seconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return value < 1 ? Units.fixed(value * 1000, decimals: 1) + " ms" : Units.fixed(value, decimals: 2) + " s"
    }
}
