import HarnessModel

/// The sweep part of a report: peak per swept value and strategy, with the fitted growth slope.
public enum SweepSection {
    public static func markdown(_ sweeps: [SweepSummary]) -> String {
        MarkdownRenderer.render(sweeps.map { .section(section($0)) })
    }

    /// One sweep's section: peak per swept value and strategy, with the fitted growth slope.
    static func section(_ sweep: SweepSummary) -> Section {
        let labels = sweep.series.first?.points.map(\.label) ?? []
        var table = Table(
            columns: [.init("Strategy")] + labels.map { .init(.code($0), .number) }
                + [.init("Slope", .number), .init("r²", .number)])
        for series in sweep.series {
            let values = series.points.map { point -> Phrase in
                point.medianPeakAllocatedNetBytes.map { .value(.bytes($0)) } ?? "failed"
            }
            let slope = series.fit.map { "\(Value.bytes($0.slope))/\(perUnit(sweep.xUnit))" as Phrase } ?? "–"
            let r2 = series.fit?.rSquared.map { Phrase.value(.number($0, decimals: 3)) } ?? "–"
            table.rows.append([.code(series.strategy)] + values + [slope, r2])
        }
        return Section(
            level: 2, heading: "Sweep: \(sweep.scenario) over \(code: sweep.key)",
            blocks: [
                .paragraph(
                    "Median peak allocated above baseline at each value, and the least-squares slope of peak against "
                        + "the value (a bounded strategy has a slope near zero; one that queues work grows linearly)."),
                .table(table),
            ])
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
