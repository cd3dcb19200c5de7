import HarnessModel
import Testing
import WorkloadKit

/// Checks a case's reported metrics against its workload's declaration (`WorkloadDescriptor.metrics`,
/// which thresholds are validated against before anything runs): every reported metric is declared,
/// with the same unit; with `complete`, every declared metric was reported. An empty report fails:
/// a check of nothing could not fail.
public func expectMetrics(
    _ metrics: [Metric], declaredBy descriptor: WorkloadDescriptor, complete: Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(!metrics.isEmpty, "\(descriptor.name) reported no metrics", sourceLocation: sourceLocation)
    let declared = Dictionary(uniqueKeysWithValues: descriptor.metrics.map { ($0.name, $0.unit) })
    for metric in metrics {
        let declaration = declared[metric.name].map { "it in \($0.rawValue)" } ?? "no such metric"
        #expect(
            declared[metric.name] == metric.unit,
            "\(descriptor.name) reports '\(metric.name)' in \(metric.unit.rawValue) but declares \(declaration)",
            sourceLocation: sourceLocation)
    }
    if complete {
        let missing = Set(declared.keys).subtracting(metrics.map(\.name)).sorted()
        #expect(
            missing.isEmpty, "\(descriptor.name) declares metrics it did not report: \(missing)",
            sourceLocation: sourceLocation)
    }
}
