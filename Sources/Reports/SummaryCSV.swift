import HarnessModel
import Verdicts

/// Writes `summary.csv`, one row per measured case (a repetition), and `instrumented.csv`, one row per instrumented
/// case (the extra case of a strategy that recorded allocation stacks or captured its heap; its figures are inflated
/// by what it records, so it is kept apart: a consumer grouping summary.csv by strategy sees measurements only). The
/// two files have the same columns but the second, `repetition` in summary.csv and `instrumentation` (`stacks` or
/// `heap`) in instrumented.csv.
///
/// Fixed columns first (see `fixedColumns`), then the measurement floor's (`floorColumns`) when any case
/// has one, then the exact-peak columns (`exactColumns`) when any case was run with `--peak exact`, then
/// the external program's exit and stderr (`programColumns`) when any case ran one, then
/// the strategy's median net peak and the ends of its 95% interval (`RepetitionsSection.columns`, and
/// `.exactColumns` for exact peaks) when some strategy ran 6 or more repetitions (the same on every row of
/// a strategy), then `phase.<phase>.peak_allocated_net_bytes` for every phase
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
        "expectation", "leak_verdict", "leaked_objects", "growth_bytes_per_iteration",
        "growth_bound_bytes_per_iteration",
        "residue_uncertainty_bytes", "memory_warnings", "killed_at_ms", "footprint_at_kill_bytes",
        "limit_overshoot_bytes",
        "limit_overshoot_at_stop_bytes",
    ]

    /// The columns of exact peaks, present only when some case has them: the exact count at the
    /// baseline, its peak (absolute and net), the spike excess (exact net minus sampled net) and
    /// the allocating calls counted.
    public static let exactColumns = [
        "exact_baseline_bytes", "exact_peak_bytes", "exact_peak_net_bytes", "spike_excess_bytes",
        "exact_allocation_calls",
    ]

    /// The heap graph's figures (`--heap-graph`, `expect:`), present only when some case captured its heap: blocks
    /// and bytes no root reaches in its last capture (after teardown, a program's at exit), the cycles among them, and
    /// the leaks' signatures with their group counts (`3f9a0c12be47×20;…`, largest first, as report.md lists them).
    public static let heapGraphColumns = ["leaked_blocks", "leaked_bytes", "leaked_cycles", "leak_signatures"]

    /// The columns of external programs (`workload: command`, `memharness profile`), present only when some
    /// case ran one: the status it exited with (empty when a signal ended it) and the last lines of its
    /// stderr, newlines as ` | `.
    public static let programColumns = ["exit_status", "stderr_tail"]

    /// The columns of the measurement floor (see `MeasurementFloor`), present only when some case has one:
    /// the ± of the net peak and what the harness allocated after the baseline. Exact cases add
    /// `exact_peak_uncertainty_bytes` after the exact columns.
    public static let floorColumns = ["peak_uncertainty_bytes", "harness_allocated_bytes"]

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

    /// The summary of the measured cases of `report` (summary.csv), or of its instrumented cases
    /// (instrumented.csv, nil when it has none).
    public static func render(_ report: RunReport) -> String {
        render(report.scenarios.flatMap(\.cases), of: report, instrumented: false)
    }

    /// instrumented.csv: the instrumented cases of `report`, each named by what it recorded; nil when it has none.
    public static func renderInstrumented(_ report: RunReport) -> String? {
        let cases = report.scenarios.flatMap(\.instrumentedCases)
        return cases.isEmpty ? nil : render(cases, of: report, instrumented: true)
    }

    private static func render(_ everyCase: [CaseResult], of report: RunReport, instrumented: Bool) -> String {
        var phaseColumns: [String] = []
        var exactPhaseColumns: [String] = []
        var metricColumns: [String] = []
        var anyExact = false
        var anyFloor = false
        var anyProgram = false
        let anyHeapGraph = everyCase.contains { $0.measurements?.heapGraph != nil }
        for result in everyCase {
            guard let measurements = result.measurements else { continue }
            anyExact = anyExact || measurements.exact != nil
            anyProgram = anyProgram || measurements.program != nil
            anyFloor = anyFloor || measurements.floor != nil
            for phase in measurements.phases where !phaseColumns.contains(column(forPhase: phase.name)) {
                phaseColumns.append(column(forPhase: phase.name))
            }
            for phase in measurements.phases where phase.exactPeakLiveBytes != nil {
                if !exactPhaseColumns.contains(exactColumn(forPhase: phase.name)) {
                    exactPhaseColumns.append(exactColumn(forPhase: phase.name))
                }
            }
            for metric in measurements.metrics where !metricColumns.contains(column(for: metric)) {
                metricColumns.append(column(for: metric))
            }
        }
        let intervals = instrumented ? [:] : RepetitionsSection.cells(report)
        let intervalColumns = [RepetitionsSection.columns, RepetitionsSection.exactColumns].filter { names in
            intervals.values.contains { $0[names[0]] != nil }
        }.flatMap { $0 }
        var table = CSVTable(
            columns: (instrumented ? fixedColumns.map { $0 == "repetition" ? "instrumentation" : $0 } : fixedColumns)
                + (anyFloor ? floorColumns : [])
                + (anyExact ? exactColumns + (anyFloor ? ["exact_peak_uncertainty_bytes"] : []) : [])
                + (anyProgram ? programColumns : [])
                + (anyHeapGraph ? heapGraphColumns : []) + intervalColumns + phaseColumns + exactPhaseColumns
                + metricColumns.sorted())
        for result in everyCase {
            var cells: [String: String] = [
                "scenario": result.scenario, "workload": result.workload, "strategy": result.strategy,
                "repetition": String(result.repetition), "instrumentation": result.instrumentation?.rawValue ?? "",
                "status": result.status.rawValue, "failure": result.failureText ?? "",
                "expectation": result.expectation?.rawValue ?? "",
            ]
            if let measurements = result.measurements { cells.merge(self.cells(measurements, result)) { $1 } }
            cells.merge(intervals["\(result.scenario)\u{1F}\(result.strategy)"] ?? [:]) { $1 }
            if case .killedByMemoryLimit(let hit, _) = result.outcome {
                cells["killed_at_ms"] = Units.fixed(Double(hit.timeNanoseconds) / 1e6, decimals: 3)
                cells["footprint_at_kill_bytes"] = String(hit.footprintBytes)
                cells["limit_overshoot_bytes"] = String(hit.overshootBytes)
                cells["limit_overshoot_at_stop_bytes"] = hit.overshootAtStopBytes.map(String.init) ?? ""
            }
            table.append(cells)
        }
        return table.text
    }

    /// The cells of a case's measurements.
    static func cells(_ m: CaseMeasurements, _ result: CaseResult) -> [String: String] {
        var cells: [String: String] = [
            "baseline_allocated_bytes": String(m.baselineAllocatedBytes),
            "peak_allocated_bytes": String(m.peak.allocatedBytes),
            "peak_allocated_net_bytes": String(m.peakAllocatedNetBytes),
            "peak_active_bytes": String(m.peak.activeBytes), "peak_resident_bytes": String(m.peak.residentBytes),
            "peak_mapped_bytes": String(m.peak.mappedBytes), "peak_retained_bytes": String(m.peak.retainedBytes),
            "peak_metadata_bytes": String(m.peak.metadataBytes), "peak_rss_bytes": String(m.peakRSSBytes),
            "residue_bytes": m.residueBytes.map(String.init) ?? "",
            "duration_ms": Units.fixed(Double(m.durationNanoseconds) / 1e6, decimals: 3),
            "sample_count": String(m.sampling.sampleCount),
            "interval_requested_us": Units.fixed(Double(m.sampling.requestedIntervalNanoseconds) / 1e3, decimals: 1),
            "interval_achieved_us": Units.fixed(Double(m.sampling.achievedIntervalNanoseconds) / 1e3, decimals: 1),
            "sampler_allocated_bytes": String(m.sampling.samplerAllocatedBytes),
            "memory_warnings": m.memoryWarnings.map(String.init) ?? "",
        ]
        cells.merge(leakCells(m, result)) { $1 }
        for phase in m.phases {
            cells[column(forPhase: phase.name)] = String(phase.peakAllocatedBytes - m.baselineAllocatedBytes)
            if let net = m.exactPeakNetBytes(of: phase) { cells[exactColumn(forPhase: phase.name)] = String(net) }
        }
        if let floor = m.floor {
            cells["peak_uncertainty_bytes"] = String(floor.peakUncertaintyBytes)
            cells["harness_allocated_bytes"] = String(floor.harnessAllocatedBytes)
            cells["exact_peak_uncertainty_bytes"] = m.exactPeakUncertaintyBytes.map(String.init) ?? ""
        }
        if let exact = m.exact {
            cells["exact_baseline_bytes"] = String(exact.baselineLiveBytes)
            cells["exact_peak_bytes"] = String(exact.peakLiveBytes)
            cells["exact_peak_net_bytes"] = String(exact.peakNetBytes)
            cells["spike_excess_bytes"] = m.spikeExcessBytes.map(String.init) ?? ""
            cells["exact_allocation_calls"] = String(exact.allocationCalls)
        }
        if let program = m.program {
            // A signal is not an exit status: the cell stays empty then, as it does for a program killed at its timeout.
            if case .exited(let status) = program.termination {
                cells["exit_status"] = String(status)
            } else {
                cells["exit_status"] = ""
            }
            cells["stderr_tail"] = program.stderrTail.split(separator: "\n").joined(separator: " | ")
        }
        for metric in m.metrics { cells[column(for: metric)] = format(metric) }
        return cells
    }

    /// The leak cells: tracked survivors and growth, and the heap graph's leaked blocks where the case captured it.
    static func leakCells(_ m: CaseMeasurements, _ result: CaseResult) -> [String: String] {
        var cells: [String: String] = [:]
        if let leaks = m.leaks {
            cells["leak_verdict"] = result.leakJudgement.verdict.rawValue
            cells["leaked_objects"] =
                leaks.trackedCount > 0 || !leaks.survivors.isEmpty ? String(leaks.survivorCount) : ""
            if let fit = leaks.growth.compactMap(\.fit).max(by: {
                $0.slopeBytesPerIteration < $1.slopeBytesPerIteration
            }) {
                cells["growth_bytes_per_iteration"] = Units.fixed(fit.slopeBytesPerIteration, decimals: 1)
                cells["growth_bound_bytes_per_iteration"] = Units.fixed(fit.boundBytesPerIteration, decimals: 1)
            }
            cells["residue_uncertainty_bytes"] = String(leaks.residueUncertaintyBytes)
        }
        if let heapGraph = m.heapGraph {
            cells["leak_verdict"] = result.leakJudgement.verdict.rawValue
            cells["leaked_blocks"] = heapGraph.leakedBlocks.map(String.init) ?? ""
            cells["leaked_bytes"] = heapGraph.leakedBytes.map(String.init) ?? ""
            cells["leaked_cycles"] = heapGraph.cycleCount.map(String.init) ?? ""
            cells["leak_signatures"] =
                heapGraph.last?.groups.compactMap { group in group.signature.map { "\($0)×\(group.count)" } }
                .joined(separator: ";") ?? ""
        }
        return cells
    }

    /// A metric value in a CSV cell: integers without decimals, others with three.
    static func format(_ metric: Metric) -> String {
        metric.value == metric.value.rounded() && abs(metric.value) < 1e15
            ? String(Int64(metric.value)) : Units.fixed(metric.value, decimals: 3)
    }
}
