import Foundation
import HarnessModel

/// What `report.html`'s script draws, per scenario: the timeline of each strategy's representative case (the one
/// the SVG timeline shows), the document's flame tree of the attributed cases' live sets (at each peak, at each
/// iteration mark, an earlier run's: one column each; the script lays columns out and builds no tree), and the heap
/// graphs' cycles and retaining paths. Built from the record alone; times in microseconds, sizes in bytes, whole numbers only
/// (the JSON is the same bytes on every machine).
///
/// The data's shape is `Html/assets/page-data.schema.json` (its version is `schemaVersion`): the emitted data and the
/// fields report.js reads are both checked against it (`PageDataSchemaTests`).
struct HtmlPageData: Encodable {
    /// The version of the schema the data follows; a change of shape that breaks a reader raises it.
    static let schemaVersion = 2
    var schemaVersion = Self.schemaVersion
    var scenarios: [Scenario]
    /// The earlier run a comparison page (`compare --against DIR --html FILE`) sets beside this one, in words
    /// (its folder and when it was made); nil on a report folder's own page.
    var earlierRun: String?

    struct Scenario: Encodable {
        var name: String
        var timeline: Timeline?
        /// The live sets of the attributed strategies by call path (`AttributionSection.tree`); nil when none was
        /// attributed.
        var flame: Flame?
        var heapGraphs: [HeapGraph]
    }

    struct Timeline: Encodable {
        var lines: [Line]
        /// The phases of the longest representative case (the script is the same for all).
        var phases: [Phase]
    }

    /// One strategy's samples: allocated above its baseline.
    struct Line: Encodable {
        var strategy: String
        var colour: String
        var phaseNames: [String]
        var timeMicroseconds: [Int64]
        var netBytes: [Int]
        var phaseIndex: [Int]
        /// The line's one peak marker (the document's): the case's measured peak, at the sample where the line is
        /// highest.
        var peak: Peak
        /// Where the memory limit stopped the case; nil when it was not stopped.
        var kill: Kill?
        /// When a memory warning was posted (the `memoryWarnings` gauge went up).
        var warningMicroseconds: [Int64]
    }

    struct Peak: Encodable {
        var sampleIndex: Int
        var netBytes: Int
        /// `netBytes` as every rendering spells it (`Value.bytes`).
        var text: String
    }

    struct Kill: Encodable {
        var timeMicroseconds: Int64
        var netBytes: Int
        /// The limit above the case's baseline; nil when the footprint is not the allocated figure the line draws.
        var limitNetBytes: Int?
        var footprint: String
    }

    struct Phase: Encodable {
        var name: String
        var startMicroseconds: Int64
        var endMicroseconds: Int64
    }

    /// The document's `FlameTree`: its nodes, and its columns with the weight of each node they pass.
    struct Flame: Encodable {
        /// This run's peaks (worst first, as the Markdown lists them), then a comparison's earlier run's, then each
        /// strategy's iteration marks.
        var columns: [FlameColumn]
        /// Node 0 is the root (`all`); every node after its parent.
        var nodes: [FlameNode]
    }

    struct FlameColumn: Encodable {
        var strategy: String
        /// The earlier run of a comparison page, in words; nil for this run.
        var earlierRun: String?
        /// The iteration mark (`steady #3`); nil for the peak.
        var mark: String?
        /// The mark's time; nil for the peak.
        var timeMicroseconds: Int64?
        var peakNetBytes: Int
        var sampleMeanBytes: Int
        /// `[node, bytes, count]` for every node the column's stacks pass, in node order.
        var weights: [[Int]]
    }

    struct FlameNode: Encodable {
        var name: String
        /// The caller's node; -1 for the root.
        var parent: Int
        var library: Bool
        /// The node's source locations (`File.swift:12`), each with the columns whose stacks pass it there.
        var locations: [FlameLocation]
    }

    struct FlameLocation: Encodable {
        var text: String
        var columns: [Int]
    }

    struct HeapGraph: Encodable {
        var strategy: String
        var captures: [Capture]
    }

    struct Capture: Encodable {
        var label: String
        var liveBlocks: Int
        var liveBytes: Int
        var leakedBlocks: Int
        var leakedBytes: Int
        var cycles: [Cycle]
        var paths: [Path]
    }

    struct Cycle: Encodable {
        /// The leak group it belongs to, from 1.
        var group: Int
        var memberBlocks: Int
        var memberBytes: Int
        var edges: [Edge]
        var omittedEdges: Int
    }

    /// `from.field -> to`.
    struct Edge: Encodable {
        var from: String
        var field: String
        var to: String
    }

    struct Path: Encodable {
        var query: String
        var reason: String
        /// The root in words; nil when no matching block is reachable.
        var root: String?
        var nodes: [PathNode]
        var omittedNodes: Int
        var reachableInstances: Int
        var leakedInstances: Int
    }

    struct PathNode: Encodable {
        var type: String
        /// The field holding the reference to the next node; nil on the last.
        var field: String?
    }
}

extension HtmlPageData {
    /// The data of every scenario of `report`; with `earlier`, each scenario also carries the attributed
    /// strategies of the earlier run's scenario of the same name.
    init(_ report: RunReport, earlier: HtmlReport.EarlierRun? = nil) {
        earlierRun = earlier?.label
        scenarios = report.scenarios.map { run in
            let before = earlier.flatMap { earlier in earlier.report.scenarios.first { $0.name == run.name } }
            return Scenario(
                name: run.name, timeline: Self.timeline(run),
                flame: AttributionSection.tree(run, earlier: before, earlierLabel: earlier?.label).map(Self.flame),
                heapGraphs: HeapGraphFiles.graphs(run).map { strategy, graph in
                    HeapGraph(strategy: strategy, captures: graph.captures.map(Self.capture))
                })
        }
    }

    /// The document's tree in the page's units: each column's weights listed sparsely.
    static func flame(_ tree: FlameTree) -> Flame {
        let columns = tree.columns.enumerated().map { index, column in
            FlameColumn(
                strategy: column.strategy, earlierRun: column.earlierRun, mark: column.mark?.label,
                timeMicroseconds: column.mark.map { $0.timeNanoseconds / 1000 },
                peakNetBytes: column.measuredPeakNetBytes, sampleMeanBytes: column.sampleMeanBytes,
                weights: tree.nodes.indices.compactMap { node in
                    tree.bytes[index][node] > 0 ? [node, tree.bytes[index][node], tree.counts[index][node]] : nil
                })
        }
        let nodes = tree.nodes.map { node in
            FlameNode(
                name: node.name, parent: node.parent ?? -1, library: node.isLibrary,
                locations: node.locations.map { FlameLocation(text: $0.text, columns: $0.columns.sorted()) })
        }
        return Flame(columns: columns, nodes: nodes)
    }

    /// The document's timeline figure (`ChartBuilder.timeline`, the one the SVG draws) in the page's units.
    static func timeline(_ run: ScenarioRun) -> Timeline? {
        guard let figure = ChartBuilder.timeline(run, scale: nil) else { return nil }
        let lines = figure.series.map { series in
            Line(
                strategy: series.strategy, colour: series.colour, phaseNames: series.phaseNames,
                timeMicroseconds: series.timeNanoseconds.map { $0 / 1000 }, netBytes: series.netBytes,
                phaseIndex: series.phaseIndex,
                peak: Peak(
                    sampleIndex: series.peak.sampleIndex, netBytes: series.peak.netBytes,
                    text: Value.bytes(Double(series.peak.netBytes)).text),
                kill: series.kill.map {
                    Kill(
                        timeMicroseconds: $0.timeNanoseconds / 1000, netBytes: $0.netBytes,
                        limitNetBytes: $0.limitNetBytes, footprint: $0.footprint)
                }, warningMicroseconds: series.warningNanoseconds.map { $0 / 1000 })
        }
        let phases = figure.phases.map {
            Phase(
                name: $0.name, startMicroseconds: $0.startNanoseconds / 1000, endMicroseconds: $0.endNanoseconds / 1000)
        }
        return Timeline(lines: lines, phases: phases)
    }

    static func capture(_ capture: HeapCaptureSummary) -> Capture {
        Capture(
            label: capture.label, liveBlocks: capture.liveBlocks, liveBytes: capture.liveBytes,
            leakedBlocks: capture.leakedBlocks, leakedBytes: capture.leakedBytes,
            cycles: HeapGraphSection.cycles(in: capture).map { group, cycle in
                Cycle(
                    group: group, memberBlocks: cycle.memberBlocks, memberBytes: cycle.memberBytes,
                    edges: cycle.edges.map {
                        Edge(
                            from: HeapGraphSection.typeLabel($0.from), field: HeapGraphSection.edgeLabel($0),
                            to: HeapGraphSection.typeLabel($0.to))
                    }, omittedEdges: cycle.omittedEdges)
            },
            paths: capture.paths.map { path in
                Path(
                    query: path.query, reason: HeapGraphSection.reasonText(path.reason),
                    root: path.root.map { HeapGraphSection.rootText($0).plainText },
                    nodes: path.nodes.map { node in
                        PathNode(
                            type: HeapGraphSection.typeLabel(node.type),
                            field: node.edgeKind == nil
                                ? nil
                                : (node.fieldName ?? "+\(node.byteOffset ?? 0)")
                                    + (node.edgeKind == .unowned ? " (unowned)" : ""))
                    }, omittedNodes: path.omittedNodes, reachableInstances: path.reachableInstances,
                    leakedInstances: path.leakedInstances)
            })
    }

    /// The data as the text of a `<script type="application/json">`: every `<` written `\u003c`, so no
    /// `</script>` or `<!--` in a name can end the element early (JSON strings are the only place `<` can be).
    func scriptText() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings and whole numbers cannot fail.
        let data = (try? encoder.encode(self)) ?? Data("{\"scenarios\":[]}".utf8)
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }
}
