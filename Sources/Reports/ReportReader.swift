import HarnessModel

/// Rebuilds a `RunReport` from a report folder's CSV files, which are the source of truth: figures
/// from `summary.csv`, time series from `samples.csv`; descriptions, parameters and the environment
/// come from `run.json` when it is given (CSV files from shards or CI artifacts may come without it).
public enum ReportReader {
    /// Why a report folder could not be read.
    public struct ReadError: Error, CustomStringConvertible, Sendable {
        public var file: String
        public var line: Int
        public var message: String
        public var description: String { "\(file):\(line): \(message)" }
    }

    /// Reads the CSV texts back into a report. `metadata` (from run.json) supplies what CSV does not hold.
    public static func read(summary: String, samples: String?, metadata: RunReport?) throws(ReadError) -> RunReport {
        let rows = CSVTable.parse(summary)
        // Columns are read by name, so files from older versions (fewer columns) still read.
        let required = ["scenario", "workload", "strategy", "repetition", "status", "peak_allocated_bytes", "baseline_allocated_bytes"]
        guard let header = rows.first, required.allSatisfy(header.contains) else {
            throw ReadError(file: "summary.csv", line: 1, message: "not a memharness summary: expected at least the columns \(required.joined(separator: ","))")
        }
        var results: [CaseResult] = []
        for (offset, row) in rows.dropFirst().enumerated() where row != [""] {
            results.append(try caseResult(row, header: header, line: offset + 2))
        }
        if let samples {
            let series = try readSamples(samples)
            for index in results.indices {
                let key = "\(results[index].scenario)\u{1F}\(results[index].strategy)\u{1F}\(results[index].repetition)"
                if let found = series[key] {
                    results[index].samples = found
                    fillPhaseTimes(&results[index], from: found)
                }
            }
        }
        // Leak details (tracked types, growth series) and CPU times live in run.json only; join them by case.
        if let metadata {
            let known = metadata.scenarios.flatMap(\.cases)
            for index in results.indices {
                let result = results[index]
                if let match = known.first(where: { $0.scenario == result.scenario && $0.strategy == result.strategy && $0.repetition == result.repetition }) {
                    results[index].leaks = match.leaks
                    results[index].expectation = match.expectation
                    results[index].cpuNanoseconds = match.cpuNanoseconds
                }
            }
        }
        var scenarios: [ScenarioRun] = []
        for name in results.map(\.scenario).uniqued() {
            let cases = results.filter { $0.scenario == name }
            if var known = metadata?.scenarios.first(where: { $0.name == name }) {
                known.cases = cases
                known.strategies = known.strategies.filter { strategy in cases.contains { $0.strategy == strategy } }
                    + cases.map(\.strategy).uniqued().filter { !known.strategies.contains($0) }
                known.repetitions = cases.map(\.repetition).max() ?? 0
                scenarios.append(known)
            } else {
                scenarios.append(ScenarioRun(
                    name: name, file: "–", workload: cases.first?.workload ?? "–", summary: "", parameters: [],
                    strategies: cases.map(\.strategy).uniqued(), steps: (cases.first?.phases.map(\.name) ?? []).filter { $0 != "setup" && $0 != "teardown" },
                    repetitions: cases.map(\.repetition).max() ?? 0, cases: cases
                ))
            }
        }
        let environment = metadata?.environment ?? EnvironmentInfo(
            toolVersion: "unknown", jemallocVersion: "unknown", jemallocSettings: [:], swiftVersion: "unknown",
            operatingSystem: "unknown", kernel: "unknown", cpuModel: "unknown", cpuCount: 0, memoryBytes: 0,
            requestedIntervalNanoseconds: results.first?.requestedIntervalNanoseconds ?? 0
        )
        return RunReport(generatedAt: metadata?.generatedAt ?? "unknown", environment: environment, scenarios: scenarios)
    }

    private static func caseResult(_ row: [String], header: [String], line: Int) throws(ReadError) -> CaseResult {
        func cell(_ column: String) -> String {
            guard let index = header.firstIndex(of: column), index < row.count else { return "" }
            return row[index]
        }
        func int(_ column: String) -> Int { Int(cell(column)) ?? 0 }
        guard let repetition = Int(cell("repetition")) else {
            throw ReadError(file: "summary.csv", line: line, message: "repetition '\(cell("repetition"))' is not a whole number")
        }
        guard let status = CaseStatus(rawValue: cell("status")) else {
            throw ReadError(file: "summary.csv", line: line, message: "unknown status '\(cell("status"))'; expected one of: \(CaseStatus.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var result = CaseResult(scenario: cell("scenario"), workload: cell("workload"), strategy: cell("strategy"),
                                repetition: repetition, status: status, failure: cell("failure").isEmpty ? nil : cell("failure"))
        result.baselineAllocatedBytes = int("baseline_allocated_bytes")
        result.peak = AllocatorStatsValues(
            allocatedBytes: int("peak_allocated_bytes"), activeBytes: int("peak_active_bytes"), residentBytes: int("peak_resident_bytes"),
            mappedBytes: int("peak_mapped_bytes"), retainedBytes: int("peak_retained_bytes"), metadataBytes: int("peak_metadata_bytes")
        )
        result.peakRSSBytes = int("peak_rss_bytes")
        result.residueBytes = int("residue_bytes")
        result.durationNanoseconds = Int64(((Double(cell("duration_ms")) ?? 0) * 1e6).rounded())
        result.sampleCount = int("sample_count")
        result.requestedIntervalNanoseconds = Int64(((Double(cell("interval_requested_us")) ?? 0) * 1e3).rounded())
        result.achievedIntervalNanoseconds = Int64(((Double(cell("interval_achieved_us")) ?? 0) * 1e3).rounded())
        result.samplerAllocatedBytes = int("sampler_allocated_bytes")
        result.expectation = LeakExpectation(rawValue: cell("expectation"))
        if let baseline = Int(cell("exact_baseline_bytes")), let peak = Int(cell("exact_peak_bytes")) {
            result.exact = ExactPeakValues(baselineLiveBytes: baseline, peakLiveBytes: peak, allocationCalls: int("exact_allocation_calls"))
        }
        var exactPhaseNets: [String: Int] = [:]
        for (index, column) in header.enumerated() where index < row.count && !row[index].isEmpty {
            if column.hasPrefix("phase."), column.hasSuffix(".exact_peak_net_bytes"), let net = Int(row[index]) {
                exactPhaseNets[String(column.dropFirst("phase.".count).dropLast(".exact_peak_net_bytes".count))] = net
            } else if column.hasPrefix("phase."), column.hasSuffix(".peak_allocated_net_bytes"), let net = Int(row[index]) {
                let name = String(column.dropFirst("phase.".count).dropLast(".peak_allocated_net_bytes".count))
                result.phases.append(PhaseResult(name: name, startNanoseconds: 0, endNanoseconds: 0,
                                                 peakAllocatedBytes: net + result.baselineAllocatedBytes, peakResidentBytes: 0))
            } else if column.hasPrefix("metric."), let value = Double(row[index]) {
                result.metrics.append(metric(column: String(column.dropFirst("metric.".count)), value: value))
            }
        }
        if let exact = result.exact {
            for index in result.phases.indices {
                result.phases[index].exactPeakLiveBytes = exactPhaseNets[result.phases[index].name].map { $0 + exact.baselineLiveBytes }
            }
        }
        return result
    }

    private static func metric(column: String, value: Double) -> Metric {
        for (unit, suffix) in SummaryCSV.unitSuffixes where column.hasSuffix(suffix) {
            return Metric(name: String(column.dropLast(suffix.count)), value: value, unit: unit)
        }
        return Metric(name: column, value: value, unit: .count)
    }

    private static func readSamples(_ text: String) throws(ReadError) -> [String: SampleSeries] {
        let rows = CSVTable.parse(text)
        guard let header = rows.first, Array(header.prefix(SamplesCSV.fixedColumns.count)) == SamplesCSV.fixedColumns else {
            throw ReadError(file: "samples.csv", line: 1, message: "not a memharness samples file: expected the columns \(SamplesCSV.fixedColumns.joined(separator: ","))")
        }
        let gaugeColumns = header.enumerated().filter { $0.element.hasPrefix("gauge.") }
        var result: [String: SampleSeries] = [:]
        for (offset, row) in rows.dropFirst().enumerated() where row.count >= SamplesCSV.fixedColumns.count {
            let key = "\(row[0])\u{1F}\(row[1])\u{1F}\(row[2])"
            var series = result[key] ?? SampleSeries(phaseNames: [], gaugeNames: gaugeColumns.filter { $0.offset < row.count && !row[$0.offset].isEmpty }.map { String($0.element.dropFirst("gauge.".count)) })
            guard let time = Double(row[3]) else {
                throw ReadError(file: "samples.csv", line: offset + 2, message: "t_ms '\(row[3])' is not a number")
            }
            let phase = row[4]
            if !series.phaseNames.contains(phase) { series.phaseNames.append(phase) }
            series.timeNanoseconds.append(Int64((time * 1e6).rounded()))
            series.phaseIndex.append(series.phaseNames.firstIndex(of: phase) ?? 0)
            series.allocatedBytes.append(Int(row[5]) ?? 0)
            series.activeBytes.append(Int(row[6]) ?? 0)
            series.residentBytes.append(Int(row[7]) ?? 0)
            series.mappedBytes.append(Int(row[8]) ?? 0)
            series.retainedBytes.append(Int(row[9]) ?? 0)
            series.metadataBytes.append(Int(row[10]) ?? 0)
            series.rssBytes.append(Int(row[11]) ?? 0)
            for (index, name) in series.gaugeNames.enumerated() {
                let column = header.firstIndex(of: "gauge.\(name)") ?? 0
                series.gauges[index].append(column < row.count ? Int64(row[column]) ?? 0 : 0)
            }
            result[key] = series
        }
        return result
    }

    /// Phase start and end times are not in summary.csv; the samples' phase column gives them.
    private static func fillPhaseTimes(_ result: inout CaseResult, from series: SampleSeries) {
        for index in result.phases.indices {
            guard let phase = series.phaseNames.firstIndex(of: result.phases[index].name) else { continue }
            let rows = series.phaseIndex.indices.filter { series.phaseIndex[$0] == phase }
            guard let first = rows.first, let last = rows.last else { continue }
            result.phases[index].startNanoseconds = series.timeNanoseconds[first]
            let next = last + 1 < series.count ? series.timeNanoseconds[last + 1] : series.timeNanoseconds[last]
            result.phases[index].endNanoseconds = next
        }
    }
}
