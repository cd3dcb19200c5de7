import HarnessModel

/// The sweep part of a report: peak per swept value and strategy, with the fitted growth slope.
public enum SweepSection {
    public static func markdown(_ sweeps: [SweepSummary]) -> String {
        var out: [String] = []
        for sweep in sweeps {
            out.append("## Sweep: \(sweep.scenario) over `\(sweep.key)`")
            out.append("")
            out.append(
                "Median peak allocated above baseline at each value, and the least-squares slope of peak against "
                    + "the value (a bounded strategy has a slope near zero; one that queues work grows linearly).")
            out.append("")
            let labels = sweep.series.first?.points.map(\.label) ?? []
            out.append(
                "| Strategy | " + labels.map { MarkdownReport.code($0) }.joined(separator: " | ")
                    + " | Slope | r² |")
            out.append("|---|" + String(repeating: "---:|", count: labels.count + 2))
            for series in sweep.series {
                let values = series.points.map { $0.medianPeakAllocatedNetBytes.map(Units.formatBytes) ?? "failed" }
                let slope = series.fit.map { "\(Units.formatBytes($0.slope))/\(perUnit(sweep.xUnit))" } ?? "–"
                let r2 = series.fit?.rSquared.map { Units.fixed($0, decimals: 3) } ?? "–"
                out.append(
                    "| \(MarkdownReport.code(series.strategy)) | " + values.joined(separator: " | ")
                        + " | \(slope) | \(r2) |")
            }
            out.append("")
        }
        return out.joined(separator: "\n")
    }

    /// `sweep.csv`: one row per strategy and value, then the fit on each row of its strategy.
    public static func csv(_ sweeps: [SweepSummary]) -> String {
        var table = CSVTable(columns: [
            "scenario", "key", "strategy", "label", "x", "x_unit", "median_peak_allocated_net_bytes",
            "slope_bytes_per_x", "intercept_bytes", "r_squared",
        ])
        for sweep in sweeps {
            for series in sweep.series {
                for point in series.points {
                    table.append([
                        sweep.scenario, sweep.key, series.strategy, point.label, Units.fixed(point.x, decimals: 6),
                        sweep.xUnit,
                        point.medianPeakAllocatedNetBytes.map { String(Int64($0)) } ?? "",
                        series.fit.map { Units.fixed($0.slope, decimals: 1) } ?? "",
                        series.fit.map { Units.fixed($0.intercept, decimals: 1) } ?? "",
                        series.fit?.rSquared.map { Units.fixed($0, decimals: 4) } ?? "",
                    ])
                }
            }
        }
        return table.text
    }

    static func perUnit(_ unit: String) -> String {
        switch unit {
        case "s": return "s"
        case "B": return "B"
        case "/s": return "(1/s)"
        default: return unit
        }
    }
}
