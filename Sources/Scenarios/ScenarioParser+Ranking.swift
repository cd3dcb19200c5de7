import HarnessModel
import WorkloadKit
import Yams

extension ParseContext {
    /// `rank: finalDatabaseBytes`, `rank: metrics.fileGrowth`, `rank: exactPeak`: the figure that ranks
    /// the strategies (any figure a threshold can name; lower is better). A metric must be one the workload declares.
    mutating func readRanking(_ node: Node, descriptor: WorkloadDescriptor, steps: [StepInvocation]) -> Figure? {
        guard let text = string(node, "rank") else { return nil }
        let metricNames = descriptor.metrics.map(\.name)
        // A bare metric name reads as that metric: `rank: fileGrowth`.
        let name = metricNames.contains(text) ? "metrics.\(text)" : text
        let names = ThresholdNames(
            strategies: [], phases: ["setup"] + steps.map(\.phase) + ["teardown"], metrics: descriptor.metrics)
        guard let figure = readFigure(name, at: node, names) else { return nil }
        guard !figure.isHeapGraph else {
            // The heap graph is captured once per strategy, by a case whose figures never rank.
            report(
                node,
                "'\(text)' cannot rank strategies: it is a heap-graph figure, taken once per strategy on an "
                    + "instrumented case; rank by a measured figure (peakAllocated, exactPeak, residue, metrics.<name>) "
                    + "and gate on '\(text)' with a threshold instead")
            return nil
        }
        return figure
    }

    /// `rate: burst`: a phase of the scenario's steps, whose growth per second the report gives.
    mutating func readRatePhase(_ node: Node, phases: [String]) -> String? {
        guard let text = string(node, "rate") else { return nil }
        guard phases.contains(text) else {
            report(
                node,
                "no phase '\(text)' for 'rate'; the scenario's phases: \(phases.joined(separator: ", "))"
                    + suggestion(text, phases))
            return nil
        }
        return text
    }

    /// `attribution: true` (stacks sampled every 64 KiB on average), `false`, or a mean such as `32KiB`.
    mutating func readAttribution(_ node: Node) -> AttributionRequest? {
        guard let text = string(node, "attribution") else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return AttributionRequest()
        case "false", "no", "off": return nil
        default:
            // A mean below 1 KiB would sample nearly every allocation (slow); above 64 MiB, almost none.
            guard let bytes = Units.parseBytes(text), (1 << 10)...(64 << 20) ~= bytes else {
                report(
                    node,
                    "bad value '\(text)' for 'attribution'; expected true, false, or a mean sampling interval "
                        + "from 1KiB to 64MiB, e.g. 64KiB")
                return nil
            }
            return AttributionRequest(sampleMeanBytes: bytes)
        }
    }
}
