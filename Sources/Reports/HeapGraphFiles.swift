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

    /// The cycle diagrams (of each strategy's last capture, the one the section shows) and every capture's JSON.
    static func files(_ report: RunReport) throws(ReportError) -> [(path: String, data: Data)] {
        var files: [(path: String, data: Data)] = []
        for run in report.scenarios {
            for (strategy, graph) in graphs(run) {
                if let last = graph.last {
                    for (number, entry) in HeapGraphSection.cycles(in: last).enumerated() {
                        let title = "\(run.name) / \(strategy): cycle \(number + 1) (leak group \(entry.group))"
                        let svg = CycleDiagram.svg(for: entry.cycle, title: title)
                        files.append((cyclePath(run, strategy, number + 1), Data(svg.utf8)))
                    }
                }
                for (number, capture) in graph.captures.enumerated() {
                    let json = try HeapGraphJSON.render(capture, scenario: run.name, strategy: strategy)
                    files.append((capturePath(run, strategy, number + 1), Data(json.utf8)))
                }
            }
        }
        return files
    }

    /// The section's Markdown; nothing when no case of the scenario captured its heap.
    static func lines(for run: ScenarioRun) -> [String] {
        let graphs = graphs(run)
        guard !graphs.isEmpty else { return [] }
        var out = [
            "### Why memory is kept", "",
            "The heap captured as a graph in one more case per strategy (`--heap-graph`; its figures are left out of "
                + "the tables and checks above: tracking every block slows allocation). A block no root reaches "
                + "(globals, thread stacks, registers, thread-local storage) is leaked; leaks are grouped as macOS "
                + "`leaks` groups them, and `weak` references never keep anything.",
            "",
        ]
        for (strategy, graph) in graphs {
            out += HeapGraphSection.lines(
                for: graph, strategy: strategy, headingLevel: 4,
                cycleDiagram: { number in cyclePath(run, strategy, number) })
        }
        return out
    }
}
