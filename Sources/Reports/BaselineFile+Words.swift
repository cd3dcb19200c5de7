import FileIO
import HarnessModel

extension BaselineFile {
    /// What `baseline save` says once `baseline`, taken from `report` (the report folder `source`), is in `path`:
    /// the cases whose medians it keeps, over how many strategies, and, when it keeps noise, how many figures got
    /// a tolerance derived from it.
    public static func savedMessage(_ baseline: Baseline, report: RunReport, from source: String, to path: String)
        -> String
    {
        let derived = baseline.noise?.values.reduce(0) { $0 + $1.count } ?? 0
        let one = derived == 1
        let tolerances =
            baseline.noise == nil
            ? "" : "; \(derived) figure\(one ? "" : "s") with a tolerance derived from \(one ? "its" : "their") noise"
        // The cases the medians are taken over: those that completed (a failed case has no figures).
        let cases = report.scenarios.reduce(0) { $0 + $1.cases.filter { $0.completed != nil }.count }
        let strategies = baseline.cases.count
        return "Baseline '\(baseline.name)': the medians of \(cases) case\(cases == 1 ? "" : "s") "
            + "(\(strategies) strateg\(strategies == 1 ? "y" : "ies")) from \(source) written to \(path)\(tolerances)"
    }
}
