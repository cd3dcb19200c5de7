import FileIO
import Foundation
import HarnessModel

/// "Why memory is kept" in a scenario's section of `report.md`, and the files behind it: per strategy whose
/// instrumented case captured its heap (`--heap-graph`), the heap graph section, each cycle drawn
/// (`charts/<scenario>-<strategy>-cycle-<n>.svg`) and each capture as bounded JSON for tools
/// (`heap/<scenario>/<strategy>-<k>.json`).
enum HeapGraphFiles {
    /// The heap graphs of `run`'s instrumented cases, in the scenario file's order of strategies.
    static func graphs(_ run: ScenarioRun) -> [(strategy: String, graph: HeapGraphSummary)] {
        run.strategies.compactMap { strategy in
            run.instrumentedCases.first { $0.strategy == strategy && $0.measurements?.heapGraph != nil }
                .flatMap { result in result.measurements?.heapGraph.map { (strategy, $0) } }
        }
    }

    static func cyclePath(_ run: ScenarioRun, _ strategy: String, _ number: Int) -> String {
        "charts/\(ReportBundle.chartStem(run.name))-\(ReportBundle.chartStem(strategy))-cycle-\(number).svg"
    }

    static func capturePath(_ run: ScenarioRun, _ strategy: String, _ number: Int) -> String {
        "heap/\(ReportBundle.chartStem(run.name))/\(ReportBundle.chartStem(strategy))-\(number).json"
    }

    /// Every capture's JSON (the cycle diagrams are figures of the document).
    static func files(_ report: RunReport) throws(ReportError) -> [(path: String, data: Data)] {
        var files: [(path: String, data: Data)] = []
        for run in report.scenarios {
            for (strategy, graph) in graphs(run) {
                for (number, capture) in graph.captures.enumerated() {
                    let json = try HeapGraphJSON.render(capture, scenario: run.name, strategy: strategy)
                    files.append((capturePath(run, strategy, number + 1), Data(json.utf8)))
                }
            }
        }
        return files
    }

    /// The section; nil when no case of the scenario captured its heap. `files`: the files to link (nil: all).
    static func section(for run: ScenarioRun, files: Set<String>?) -> Section? {
        let graphs = graphs(run)
        guard !graphs.isEmpty else { return nil }
        var blocks: [Block] = [
            .paragraph(
                "The heap captured as a graph in one more case per strategy (\(code: "--heap-graph"); its figures are "
                    + "left out of the tables and checks above: tracking every block slows allocation). A block no "
                    + "root reaches (globals, thread stacks, registers, thread-local storage) is leaked; leaks are "
                    + "grouped as macOS \(code: "leaks") groups them, and \(code: "weak") references never keep "
                    + "anything.")
        ]
        for (strategy, graph) in graphs {
            let section = HeapGraphSection.section(
                for: graph, strategy: strategy, headingLevel: 4,
                suppressions: (run.cases + run.instrumentedCases).suppressions(of: strategy),
                cycleDiagram: { number in
                    let path = cyclePath(run, strategy, number)
                    return files?.contains(path) ?? true ? path : nil
                },
                title: { number, group in "\(run.name) / \(strategy): cycle \(number) (leak group \(group))" })
            if let section { blocks.append(.section(section)) }
        }
        return Section(level: 3, heading: "Why memory is kept", blocks: blocks)
    }
}
