import WorkloadKit

/// The text of `memharness list`: every workload of a catalog with its strategies, parameters (defaults,
/// ranges and units), steps (the built-in ones included, with their arguments' defaults), metrics and gauges.
enum WorkloadListing {
    /// The listing of `catalog`, workloads in catalog order, names padded to one column.
    static func render(_ catalog: WorkloadCatalog) -> String {
        var lines: [String] = []
        for workload in catalog.workloads {
            let descriptor = workload.descriptor
            lines.append("\(descriptor.name): \(descriptor.summary)")
            lines.append("  strategies:")
            for strategy in descriptor.strategies {
                lines.append("    \(padded(strategy.name)) \(strategy.summary)")
            }
            lines.append("  parameters:")
            for parameter in descriptor.parameters {
                var line = "    \(padded(parameter.name)) default \(parameter.defaultValue)"
                if let range = parameter.range { line += ", range \(parameter.describe(range))" }
                lines.append(line + ". \(parameter.summary)")
            }
            lines.append("  steps:")
            for step in descriptor.steps + BuiltInStep.all {
                let arguments = step.arguments.map { "\($0.name)=\($0.defaultValue)" }.joined(separator: ", ")
                lines.append("    \(padded(step.name)) \(step.summary)" + (arguments.isEmpty ? "" : " [\(arguments)]"))
            }
            if !descriptor.metrics.isEmpty {
                lines.append("  metrics:")
                for metric in descriptor.metrics {
                    lines.append("    \(padded(metric.name)) \(metric.summary) (\(metric.unit.rawValue))")
                }
            }
            if !descriptor.gauges.isEmpty {
                lines.append("  gauges:")
                for gauge in descriptor.gauges {
                    lines.append("    \(padded(gauge.name)) \(gauge.summary)")
                }
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    /// `name` padded with spaces to the listing's name column (26 characters); a longer name is kept whole.
    static func padded(_ name: String) -> String {
        name.count >= 26 ? name : name + String(repeating: " ", count: 26 - name.count)
    }
}
