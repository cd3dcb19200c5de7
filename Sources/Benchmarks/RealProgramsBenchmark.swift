import FileIO
import Foundation
import HarnessModel
import ProgramCorpus
import Reports

/// `real-programs`: the heap graph on Swift programs nobody here wrote (the corpus's toolchain programs), as a new user
/// runs it: `memharness profile --heap-graph -- PROGRAM`, the program held at its exit while its heap is named from its
/// memory. Per program: the live heap at exit, the share of it named (by a type, by an allocation site), the Swift
/// objects named by their type, the leaks with their allocation sites, wall times against the program alone. And the
/// subscriptions scenario's own captures, named in its case processes. DIR/real-programs.md.
enum RealProgramsBenchmark {
    /// One program's runs: alone, under `profile`, under `profile --heap-graph` (and its last capture).
    struct Row {
        var program: CorpusProgram
        var alone: [Double] = []
        var sampled: [Double] = []
        var heapGraph: [Double] = []
        var capture: HeapCaptureSummary?
        var problems: [String] = []
    }

    static func run(_ environment: BenchEnvironment, rounds: Int) throws -> String {
        let programs = Corpus.full.filter { $0.traits.contains(.swift) }
        let scratch = environment.scratch.appendingPathComponent("real-programs").path
        var rows: [Row] = []
        for program in programs where program.isInstalled {
            rows.append(try measure(program, environment: environment, scratch: scratch, rounds: rounds))
            FileHandle.standardError.write(Data("\(program.name): \(rows.last?.problems ?? [])\n".utf8))
        }
        let missing = programs.filter { !$0.isInstalled }.map(\.name)
        var text = introduction(rounds: rounds) + programTable(rows) + leakLines(rows)
        if !missing.isEmpty { text += "\nNot installed here, left out: \(missing.joined(separator: ", ")).\n" }
        text += try scenarioSection(environment)
        return text
    }

    /// `rounds` runs of each way, interleaved (alone, sampled, heap graph) so that a change of load falls on all three.
    static func measure(_ program: CorpusProgram, environment: BenchEnvironment, scratch: String, rounds: Int) throws
        -> Row
    {
        var row = Row(program: program)
        for _ in 0..<max(rounds, 1) {
            let alone = try CorpusRun.run(program, memharness: nil, scratch: scratch)
            row.alone.append(alone.seconds)
            let sampled = try CorpusRun.run(program, memharness: environment.plainBinary, scratch: scratch)
            row.sampled.append(sampled.seconds)
            var capture: HeapCaptureSummary?
            let graphed = try CorpusRun.run(
                program, memharness: environment.plainBinary, mode: .heapGraph, scratch: scratch
            ) { folder in
                let record = try? ReportFolder.read(folder)
                capture = record?.report.scenarios.first?.instrumentedCases.first?.measurements?.heapGraph?.last
            }
            row.heapGraph.append(graphed.seconds)
            row.capture = capture ?? row.capture
            let problems =
                CorpusCheck.problems(program, plain: alone, profiled: graphed)
                + (capture == nil ? ["no heap capture in the report"] : [])
            row.problems += problems.filter { !row.problems.contains($0) }
        }
        return row
    }

    static func introduction(rounds: Int) -> String {
        """
        # The heap graph on real programs

        Each Swift program of the corpus (`Sources/ProgramCorpus/Corpus.swift`), in a fresh folder, run \(rounds) \
        time\(rounds == 1 ? "" : "s") each way, interleaved: alone, under `memharness profile`, and under \
        `memharness profile --heap-graph` (the program runs twice there: the measured run, then the run whose heap is \
        captured at its exit while the program is held, named from its memory and analysed). The heap figures are \
        those of the last `--heap-graph` run's capture. Named: by a type (a class or generic instance, collection \
        storage, a closure by its function, a box by its value's type, a task by its function, a C++ class) or, a \
        block that is no object, by its allocation site (the first frame of its allocation stack that is the \
        program's code, else the library function that called malloc). Times are medians, seconds; the ratios are \
        of medians against the program alone. `make bench-real-programs` writes this file.


        """
    }

    static func programTable(_ rows: [Row]) -> String {
        var lines = [
            "| Program | Live blocks | Live bytes | Named: by type | by site | in all (bytes / blocks) "
                + "| Swift objects by type | Not named, by why | Leaks: groups, blocks | with a site "
                + "| Alone | `profile` | `--heap-graph` | Ratio | Problems |",
            "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for row in rows {
            let times = [row.alone, row.sampled, row.heapGraph].map(median)
            let timeCells = times.map { String(format: "%.2f", $0) } + [ratio(times[2], times[0])]
            let problems = row.problems.isEmpty ? "none" : row.problems.joined(separator: "; ")
            guard let capture = row.capture, let naming = capture.naming else {
                lines.append(
                    "| \(row.program.name) | – | – | – | – | – | – | – | – | – | "
                        + timeCells.joined(separator: " | ") + " | \(problems) |")
                continue
            }
            let shares = [
                percent(naming.typedBytes, capture.liveBytes), percent(naming.siteOnlyBytes, capture.liveBytes),
                "**\(percent(naming.typedBytes + naming.siteOnlyBytes, capture.liveBytes))** / "
                    + percent(naming.typedBlocks + naming.siteOnlyBlocks, capture.liveBlocks),
            ]
            let swift =
                "\(naming.swiftObjectsNamedByType) of \(naming.swiftObjectBlocks) "
                + "(\(percent(naming.swiftObjectsNamedByType, naming.swiftObjectBlocks)))"
            let rest =
                naming.unnamed.isEmpty
                ? "none"
                : naming.unnamed.map { "\($0.reason.rawValue) \(Units.formatBytes($0.bytes))" }.joined(separator: ", ")
            let groups = capture.groups.count + capture.omittedGroups
            let sited = capture.groups.filter { $0.allocationStack?.isEmpty == false }.count
            let cells =
                ["\(row.program.name)", "\(capture.liveBlocks)", Units.formatBytes(capture.liveBytes)] + shares
                + [swift, rest, "\(groups), \(capture.leakedBlocks)", "\(sited) of \(capture.groups.count) shown"]
                + timeCells + [problems]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Each program's largest leak groups, with where they were allocated.
    static func leakLines(_ rows: [Row]) -> String {
        var lines = ["", "## Leaks at exit, largest groups first", ""]
        for row in rows {
            guard let capture = row.capture else { continue }
            guard !capture.groups.isEmpty else {
                lines.append("- \(row.program.name): no leak.")
                continue
            }
            lines.append(
                "- \(row.program.name): \(capture.leakedBlocks) blocks (\(Units.formatBytes(capture.leakedBytes))) "
                    + "in \(capture.groups.count + capture.omittedGroups) groups; the largest:")
            for group in capture.groups.prefix(5) {
                let types = group.types.prefix(3).map { "\(HeapGraphSection.typeLabel($0.type)) ×\($0.count)" }
                    .joined(separator: ", ")
                let site = group.allocationStack?.first.map { "`\($0)`" } ?? "–"
                lines.append(
                    "  - \(group.blocks) blocks, \(Units.formatBytes(group.bytes)): \(types); allocated at \(site)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The subscriptions scenario's captures after teardown (its case processes name their own heap).
    static func scenarioSection(_ environment: BenchEnvironment) throws -> String {
        let out = environment.scratch.appendingPathComponent("subscriptions").path
        _ = try BenchChild.run(
            environment.plainBinary, ["run", "Scenarios/subscriptions.yaml", "--heap-graph", "--quiet", "--out", out],
            timeout: .seconds(1800))
        let record = try ReportFolder.read(out)
        var lines = [
            "", "## The subscriptions scenario, its own captures (after teardown)", "",
            "Each strategy's last capture of `memharness run Scenarios/subscriptions.yaml --heap-graph`, named in the "
                + "case process.", "",
            "| Strategy | Live blocks | Live bytes | Named: by type | by site | in all (bytes / blocks) "
                + "| Swift objects by type | Not named, by why | Leak groups | with a site |",
            "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|",
        ]
        let cases = record.report.scenarios.flatMap(\.instrumentedCases).sorted { $0.strategy < $1.strategy }
        for result in cases {
            guard let capture = result.measurements?.heapGraph?.last, let naming = capture.naming else { continue }
            let rest =
                naming.unnamed.isEmpty
                ? "none"
                : naming.unnamed.map { "\($0.reason.rawValue) \(Units.formatBytes($0.bytes))" }.joined(separator: ", ")
            let sited = capture.groups.filter { $0.allocationStack?.isEmpty == false }.count
            lines.append(
                "| \(result.strategy) | \(capture.liveBlocks) | \(Units.formatBytes(capture.liveBytes)) | "
                    + "\(percent(naming.typedBytes, capture.liveBytes)) | "
                    + "\(percent(naming.siteOnlyBytes, capture.liveBytes)) | "
                    + "**\(percent(naming.typedBytes + naming.siteOnlyBytes, capture.liveBytes))** / "
                    + "\(percent(naming.typedBlocks + naming.siteOnlyBlocks, capture.liveBlocks)) | "
                    + "\(naming.swiftObjectsNamedByType) of \(naming.swiftObjectBlocks) | \(rest) | "
                    + "\(capture.groups.count + capture.omittedGroups) | \(sited) of \(capture.groups.count) shown |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `Statistics.median` (the one median); 0 for none.
    static func median(_ values: [Double]) -> Double {
        Statistics.median(values) ?? 0
    }

    static func ratio(_ value: Double, _ base: Double) -> String {
        base > 0 ? String(format: "%.2fx", value / base) : "–"
    }

    static func percent(_ part: Int, _ whole: Int) -> String {
        String(format: "%.1f%%", 100.0 * Double(part) / Double(max(whole, 1)))
    }
}
