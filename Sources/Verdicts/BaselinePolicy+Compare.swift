import HarnessModel

extension BaselinePolicy {
    /// Compares every baseline figure of the strategies the run has (see `BaselineComparison` for the rule);
    /// cases absent from the run are skipped (shards, subsets).
    public func compare(_ report: RunReport, with baseline: Baseline, baselineFile: String) -> [Check] {
        var checks: [Check] = []
        for run in report.scenarios {
            for strategy in run.strategies {
                let key = "\(run.name)/\(strategy)"
                guard let base = baseline.cases[key] else { continue }
                for figure in Baseline.figures(of: run) {
                    let values = ThresholdEvaluator.values(FigureReference(strategy: strategy, figure: figure), in: run)
                    guard let old = base[figure.description],
                        let comparison = BaselineComparison(
                            old: old, values: values, tolerance: tolerance,
                            noise: baseline.derivedTolerance(key, figure), floorBytes: floorBytes)
                    else { continue }
                    let judgement = BaselineJudgement(
                        figure: figure, comparison: comparison, baselineFile: baselineFile,
                        failOnImprovement: failOnImprovement)
                    checks.append(
                        Check(
                            scenario: run.name, strategy: strategy, passed: judgement.passed,
                            judgement: .baseline(judgement)))
                }
            }
        }
        return checks
    }
}
