import HarnessModel

/// Writes `summary.csv`: one row per case.
///
/// Fixed columns first (see `fixedColumns`), then the exact-peak columns (`exactColumns`) when any
/// case was run with `--peak exact`, then `phase.<phase>.peak_allocated_net_bytes` for every phase
/// seen (and `phase.<phase>.exact_peak_net_bytes` after them, with exact cases), then
/// `metric.<name>_<unit>` for every scenario metric; cells that do not apply to a case stay empty.
public enum SummaryCSV {
    /// The columns every summary has, in order.
    public static let fixedColumns = [
        "scenario", "workload", "strategy", "repetition", "status", "failure",
        "baseline_allocated_bytes", "peak_allocated_bytes", "peak_allocated_net_bytes",
        "peak_active_bytes", "peak_resident_bytes", "peak_mapped_bytes", "peak_retained_bytes",
        "peak_metadata_bytes", "peak_rss_bytes", "residue_bytes", "duration_ms", "sample_count",
        "interval_requested_us", "interval_achieved_us", "sampler_allocated_bytes",
        "expectation", "leak_verdict", "leaked_objects", "growth_bytes_per_iteration", "growth_bound_bytes_per_iteration",
        "residue_uncertainty_bytes",
    ]

    /// The columns of exact peaks, present only when some case has them: the exact count at the
    /// baseline, its peak (absolute and net), the spike excess (exact net minus sampled net) and
    /// the allocating calls counted.
    public static let exactColumns = [
        "exact_baseline_bytes", "exact_peak_bytes", "exact_peak_net_bytes", "spike_excess_bytes", "exact_allocation_calls",
    ]

    /// The suffix each metric unit adds to its column name (counts add none).
    static let unitSuffixes: [(unit: Metric.Unit, suffix: String)] = [
        (.bytes, "_bytes"), (.milliseconds, "_ms"), (.ratio, "_ratio"), (.perSecond, "_per_s"),
    ]

    /// The CSV column of a metric: its name plus its unit.
    public static func column(for metric: Metric) -> String {
        "metric.\(metric.name)\(unitSuffixes.first { $0.unit == metric.unit }?.suffix ?? "")"
    }

    /// The CSV column of a phase's net peak.
    public static func column(forPhase phase: String) -> String {
        "phase.\(phase).peak_allocated_net_bytes"
    }

    /// The CSV column of a phase's exact net peak.
    public static func exactColumn(forPhase phase: String) -> String {
        "phase.\(phase).exact_peak_net_bytes"
    }

    /// The summary of every case of `report`.
    public static func render(_ report: RunReport) -> String {
        var phaseColumns: [String] = []
        var exactPhaseColumns: [String] = []
        var metricColumns: [String] = []
        var anyExact = false
        for scenario in report.scenarios {
            for result in scenario.cases {
                anyExact = anyExact || result.exact != nil
                for phase in result.phases where !phaseColumns.contains(column(forPhase: phase.name)) {
                    phaseColumns.append(column(forPhase: phase.name))
                }
                for phase in result.phases where phase.exactPeakLiveBytes != nil && !exactPhaseColumns.contains(exactColumn(forPhase: phase.name)) {
                    exactPhaseColumns.append(exactColumn(forPhase: phase.name))
                }
                for metric in result.metrics where !metricColumns.contains(column(for: metric)) {
                    metricColumns.append(column(for: metric))
                }
            }
        }
        var table = CSVTable(columns: fixedColumns + (anyExact ? exactColumns : []) + phaseColumns + exactPhaseColumns + metricColumns.sorted())
        for scenario in report.scenarios {
            for result in scenario.cases {
                var cells: [String: String] = [
                    "scenario": result.scenario, "workload": result.workload, "strategy": result.strategy,
                    "repetition": String(result.repetition), "status": result.status.rawValue,
                    "failure": result.failure ?? "",
                ]
                if result.status == .ok || result.sampleCount > 0 {
                    cells["baseline_allocated_bytes"] = String(result.baselineAllocatedBytes)
                    cells["peak_allocated_bytes"] = String(result.peak.allocatedBytes)
                    cells["peak_allocated_net_bytes"] = String(result.peakAllocatedNetBytes)
                    cells["peak_active_bytes"] = String(result.peak.activeBytes)
                    cells["peak_resident_bytes"] = String(result.peak.residentBytes)
                    cells["peak_mapped_bytes"] = String(result.peak.mappedBytes)
                    cells["peak_retained_bytes"] = String(result.peak.retainedBytes)
                    cells["peak_metadata_bytes"] = String(result.peak.metadataBytes)
                    cells["peak_rss_bytes"] = String(result.peakRSSBytes)
                    cells["residue_bytes"] = String(result.residueBytes)
                    cells["duration_ms"] = Units.fixed(Double(result.durationNanoseconds) / 1e6, decimals: 3)
                    cells["sample_count"] = String(result.sampleCount)
                    cells["interval_requested_us"] = Units.fixed(Double(result.requestedIntervalNanoseconds) / 1e3, decimals: 1)
                    cells["interval_achieved_us"] = Units.fixed(Double(result.achievedIntervalNanoseconds) / 1e3, decimals: 1)
                    cells["sampler_allocated_bytes"] = String(result.samplerAllocatedBytes)
                    cells["expectation"] = result.expectation?.rawValue ?? ""
                    if let leaks = result.leaks {
                        let assessment = result.leakAssessment
                        cells["leak_verdict"] = assessment.verdict.rawValue
                        cells["leaked_objects"] = leaks.trackedCount > 0 || !leaks.survivors.isEmpty ? String(leaks.survivorCount) : ""
                        if let fit = leaks.growth.compactMap(\.fit).max(by: { $0.slopeBytesPerIteration < $1.slopeBytesPerIteration }) {
                            cells["growth_bytes_per_iteration"] = Units.fixed(fit.slopeBytesPerIteration, decimals: 1)
                            cells["growth_bound_bytes_per_iteration"] = Units.fixed(fit.boundBytesPerIteration, decimals: 1)
                        }
                        cells["residue_uncertainty_bytes"] = String(leaks.residueUncertaintyBytes)
                    }
                    for phase in result.phases {
                        cells[column(forPhase: phase.name)] = String(phase.peakAllocatedBytes - result.baselineAllocatedBytes)
                        if let net = result.exactPeakNetBytes(of: phase) { cells[exactColumn(forPhase: phase.name)] = String(net) }
                    }
                    if let exact = result.exact {
                        cells["exact_baseline_bytes"] = String(exact.baselineLiveBytes)
                        cells["exact_peak_bytes"] = String(exact.peakLiveBytes)
                        cells["exact_peak_net_bytes"] = String(exact.peakNetBytes)
                        cells["spike_excess_bytes"] = result.spikeExcessBytes.map(String.init) ?? ""
                        cells["exact_allocation_calls"] = String(exact.allocationCalls)
                    }
                    for metric in result.metrics {
                        cells[column(for: metric)] = format(metric)
                    }
                }
                table.append(cells)
            }
        }
        return table.text
    }

    /// A metric value in a CSV cell: integers without decimals, others with three.
    static func format(_ metric: Metric) -> String {
        metric.value == metric.value.rounded() && abs(metric.value) < 1e15
            ? String(Int64(metric.value)) : Units.fixed(metric.value, decimals: 3)
    }
}
