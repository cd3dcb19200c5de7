import ArgumentParser
import WorkloadKit

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List workloads with their strategies, parameters (defaults and units), steps and gauges."
    )

    func run() {
        Terminal.result(WorkloadListing.render(CommandContext.catalog))
    }
}

/// The text of `memharness list`.
enum WorkloadListing {
    static func render(_ catalog: WorkloadCatalog) -> String {
        var lines: [String] = []
        for workload in catalog.workloads {
            let descriptor = workload.descriptor
            lines.append("\(descriptor.name): \(descriptor.summary)")
            lines.append("  strategies:")
            for strategy in descriptor.strategies {
                lines.append("    \(strategy.name.padded(to: 26)) \(strategy.summary)")
            }
            lines.append("  parameters:")
            for parameter in descriptor.parameters {
                var line = "    \(parameter.name.padded(to: 26)) default \(parameter.defaultValue)"
                if let range = parameter.range { line += ", range \(parameter.describe(range))" }
                lines.append(line + ". \(parameter.summary)")
            }
            lines.append("  steps:")
            for step in descriptor.steps + BuiltInStep.all {
                let arguments = step.arguments.map { "\($0.name)=\($0.defaultValue)" }.joined(separator: ", ")
                lines.append(
                    "    \(step.name.padded(to: 26)) \(step.summary)" + (arguments.isEmpty ? "" : " [\(arguments)]"))
            }
            if !descriptor.metrics.isEmpty {
                lines.append("  metrics:")
                for metric in descriptor.metrics {
                    lines.append("    \(metric.name.padded(to: 26)) \(metric.summary) (\(metric.unit.rawValue))")
                }
            }
            if !descriptor.gauges.isEmpty {
                lines.append("  gauges:")
                for gauge in descriptor.gauges {
                    lines.append("    \(gauge.name.padded(to: 26)) \(gauge.summary)")
                }
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }
}
