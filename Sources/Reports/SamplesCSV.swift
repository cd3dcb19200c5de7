import HarnessModel

/// Writes `samples.csv`: the time series of every case in long (tidy) form, one row per sample.
///
/// Columns: `scenario, strategy, repetition, t_ms, phase`, the seven memory figures in bytes, then
/// `gauge.<name>` for every gauge of any scenario (empty where a scenario lacks it). Cases with more
/// than `maxRowsPerCase` rows are thinned by merging neighbours and keeping each figure's maximum,
/// so peaks stay visible.
public enum SamplesCSV {
    /// The columns every samples file has, in order.
    public static let fixedColumns = [
        "scenario", "strategy", "repetition", "t_ms", "phase",
        "allocated_bytes", "active_bytes", "resident_bytes", "mapped_bytes",
        "retained_bytes", "metadata_bytes", "rss_bytes",
    ]

    /// Renders every case's samples; `maxRowsPerCase` 0 keeps every row.
    public static func render(_ report: RunReport, maxRowsPerCase: Int = 2000) -> String {
        var gaugeNames: [String] = []
        for scenario in report.scenarios {
            for result in scenario.cases {
                for name in result.measurements?.samples?.gaugeNames ?? [] where !gaugeNames.contains(name) {
                    gaugeNames.append(name)
                }
            }
        }
        var table = CSVTable(columns: fixedColumns + gaugeNames.map { "gauge.\($0)" })
        for scenario in report.scenarios {
            for result in scenario.cases {
                guard let original = result.measurements?.samples else { continue }
                let series = maxRowsPerCase > 0 ? SeriesThinning.thin(original, maxRows: maxRowsPerCase) : original
                for row in 0..<series.count {
                    let phaseIndex = series.phaseIndex[row]
                    var cells = [
                        result.scenario, result.strategy, String(result.repetition),
                        Units.fixed(Double(series.timeNanoseconds[row]) / 1e6, decimals: 3),
                        phaseIndex >= 0 && phaseIndex < series.phaseNames.count ? series.phaseNames[phaseIndex] : "",
                        String(series.allocatedBytes[row]), String(series.activeBytes[row]),
                        String(series.residentBytes[row]), String(series.mappedBytes[row]),
                        String(series.retainedBytes[row]), String(series.metadataBytes[row]),
                        String(series.rssBytes[row]),
                    ]
                    for name in gaugeNames {
                        if let index = series.gaugeNames.firstIndex(of: name) {
                            cells.append(String(series.gauges[index][row]))
                        } else {
                            cells.append("")
                        }
                    }
                    table.append(cells)
                }
            }
        }
        return table.text
    }
}

/// Reduces a series to at most `maxRows` rows by merging runs of neighbours, keeping the first time
/// and phase and the maximum of every figure and gauge (so no peak is lost).
public enum SeriesThinning {
    public static func thin(_ series: SampleSeries, maxRows: Int) -> SampleSeries {
        guard maxRows > 0, series.count > maxRows else { return series }
        let group = (series.count + maxRows - 1) / maxRows
        var result = SampleSeries(phaseNames: series.phaseNames, gaugeNames: series.gaugeNames)
        result.mergedSamplesPerRow = series.mergedSamplesPerRow * group
        var start = 0
        while start < series.count {
            let range = start..<min(start + group, series.count)
            result.timeNanoseconds.append(series.timeNanoseconds[start])
            result.phaseIndex.append(series.phaseIndex[start])
            result.allocatedBytes.append(series.allocatedBytes[range].max() ?? 0)
            result.activeBytes.append(series.activeBytes[range].max() ?? 0)
            result.residentBytes.append(series.residentBytes[range].max() ?? 0)
            result.mappedBytes.append(series.mappedBytes[range].max() ?? 0)
            result.retainedBytes.append(series.retainedBytes[range].max() ?? 0)
            result.metadataBytes.append(series.metadataBytes[range].max() ?? 0)
            result.rssBytes.append(series.rssBytes[range].max() ?? 0)
            for gauge in series.gauges.indices {
                result.gauges[gauge].append(series.gauges[gauge][range].max() ?? 0)
            }
            start = range.upperBound
        }
        return result
    }
}
