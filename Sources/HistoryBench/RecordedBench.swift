import Foundation
import HarnessModel
import History
import WorkloadKit

/// Detection on series recorded from real runs of unchanged programs (`make history-series`): the false change
/// points as recorded and as each history grew, then real steps of 10% injected at random runs.
enum RecordedBench {
    /// Trials of a 10% step per series, at random runs (and once in the newest run).
    static let injections = 10
    static let relativeStep = 0.10

    static func run(file: String, seed: UInt64) throws -> String {
        let recorded = try JSONDecoder().decode(
            RecordedSeries.File.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
        var generator = SeededRandom(seed: seed)
        var lines = [
            "## Detection on recorded series", "",
            "Series recorded from real runs of unchanged programs (\(file): \(recorded.recorded)): every step found "
                + "in them is false, a change point or a step of the newest run alone (what `history gate` judges). "
                + "Each series as recorded, then each first k runs of it (k from 5: what `history show` and `gate` "
                + "said as the history grew); then \(injections) times with a real step of "
                + "\(Int(relativeStep * 100))% of its median injected from a random run on (at least two runs either "
                + "side), and once in the newest run alone. Series whose median is 0 take no step. *Quieter than the "
                + "step*: the series whose central 80% of runs (10th to 90th percentile) span less than "
                + "\(Int(relativeStep * 100))% of the median; in the others the noise alone moves runs as far as the "
                + "step (throughput metrics under load, peaks the sampler catches in some runs only). Seed \(seed).",
            "",
            "| Subject | Series | Runs | False steps | False, as the histories grew | 10% step found at its run "
                + "| in series quieter than 10% | False step beside it | 10% step of the newest run alone found "
                + "| in series quieter than 10% |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        var total = RecordedSeries.Trials()
        let bySubject = RecordedSeries.trialsBySubject(
            recorded.series, relativeStep: relativeStep, injections: injections, using: &generator)
        for (subject, trials) in bySubject {
            total = total + trials
            let counts = Set(recorded.series.filter { $0.subject == subject }.map(\.values.count)).sorted()
            lines.append(row(subject, runs: counts.map(String.init).joined(separator: "-"), trials))
        }
        lines.append(row("**all**", runs: "", total))
        lines += ["", "Steps found in the series as recorded (all false):", ""] + falseSteps(recorded.series)
        return lines.joined(separator: "\n") + "\n"
    }

    static func row(_ name: String, runs: String, _ trials: RecordedSeries.Trials) -> String {
        "| \(name) | \(trials.falseSteps.trials) | \(runs) | \(ratio(trials.falseSteps)) "
            + "| \(ratio(trials.falseStepsAsTheyGrew)) | \(ratio(trials.foundAtStep)) "
            + "| \(ratio(trials.foundAtStepInQuiet)) | \(ratio(trials.falseBesideStep)) "
            + "| \(ratio(trials.foundInNewest)) | \(ratio(trials.foundInNewestInQuiet)) |"
    }

    static func ratio(_ rate: RecordedSeries.Rate) -> String {
        guard rate.trials > 0 else { return "–" }
        return "\(rate.hits)/\(rate.trials) (" + Units.fixed(Double(rate.hits) * 100 / Double(rate.trials), decimals: 1)
            + "%)"
    }

    static func falseSteps(_ series: [RecordedSeries]) -> [String] {
        var lines: [String] = []
        for entry in series {
            let analysis = ChangePointDetection.analyse(entry.values, isBytes: entry.isBytes)
            for change in analysis.steps {
                let newest = change.index == entry.values.count - 1 ? ", the newest run alone" : ""
                lines.append(
                    "- \(entry.name): at run \(change.index + 1) of \(entry.values.count)\(newest), "
                        + "\(Units.fixed(change.relativeStep * 100, decimals: 1))% (p \(Self.p(change.pValue)))")
            }
        }
        return lines.isEmpty ? ["None."] : lines
    }

    static func p(_ value: Double) -> String { value < 0.0001 ? "< 0.0001" : Units.fixed(value, decimals: 4) }
}
