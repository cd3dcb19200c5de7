import HarnessModel
import History
import WorkloadKit

/// Detection rates per kind of series, over the quality bar's 20 trials and over many more, seeded.
enum DetectionBench {
    struct Case: Sendable {
        var name: String
        var count: Int
        var step: Double
        var noise: Double
        var kind: SyntheticSeries.Noise = .normal
        var stepIndex: @Sendable (inout SeededRandom) -> Int?
    }

    static let cases: [Case] = [
        Case(name: "5% step at run 10 of 20, 1% noise", count: 20, step: 0.05, noise: 0.01) { _ in 10 },
        Case(name: "5% step at a random run (4-16) of 20, 1% noise", count: 20, step: 0.05, noise: 0.01) {
            Int.random(in: 4...16, using: &$0)
        },
        Case(name: "5% step in the newest run of 20, 1% noise (the gate)", count: 20, step: 0.05, noise: 0.01) {
            _ in 19
        },
        Case(name: "3% step at run 10 of 20, 1% noise", count: 20, step: 0.03, noise: 0.01) { _ in 10 },
        Case(
            name: "5% step at run 10 of 20, 1% heavy-tailed noise (t, 3 df)", count: 20, step: 0.05, noise: 0.01,
            kind: .heavyTailed
        ) { _ in 10 },
        Case(name: "flat, 50 runs, 1% noise", count: 50, step: 0, noise: 0.01) { _ in nil },
        Case(
            name: "flat, 50 runs, 1% heavy-tailed noise (t, 3 df)", count: 50, step: 0, noise: 0.01, kind: .heavyTailed
        ) {
            _ in nil
        },
        Case(name: "flat, 500 runs, 1% noise", count: 500, step: 0, noise: 0.01) { _ in nil },
    ]

    static func run(trials count: Int, seed: UInt64) -> String {
        var lines = [
            "## Detection", "",
            "PELT (normal mean-change cost, penalty 3 ln n), changes kept when they hold (`ChangePointDetection`: "
                + "beyond the noise band ± 2.5σ with p < 0.01 by Student's t, persistent, not an excursion that "
                + "returns). Series around 100 MiB, seeded (seed \(seed)); the first 20 trials are the quality "
                + "bar's, then \(count) more with the same seed. A step found is a change point or a step of the "
                + "newest run alone; a false alarm is a series with a step found at any other run (an extra one, or "
                + "the step placed a run off).", "",
            "| Series | Found at the step (20 trials) | False alarm (20) | Found at the step (\(count)) | False alarm (\(count)) |",
            "|---|---:|---:|---:|---:|",
        ]
        for entry in cases {
            var generator = SeededRandom(seed: seed)
            let bar = trials(entry, 20, &generator)
            let many = trials(entry, count, &generator)
            let isStep = entry.step != 0
            lines.append(
                "| \(entry.name) | \(isStep ? "\(bar.foundAtStep)/20" : "–") | \(bar.falseAlarms)/20 "
                    + "| \(isStep ? percent(many.foundAtStep, count) : "–") | \(percent(many.falseAlarms, count)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func trials(_ entry: Case, _ count: Int, _ generator: inout SeededRandom)
        -> SyntheticSeries.Trials
    {
        SyntheticSeries.trials(
            count, count: entry.count, stepIndex: entry.stepIndex, relativeStep: entry.step, relativeNoise: entry.noise,
            noise: entry.kind, using: &generator)
    }

    private static func percent(_ part: Int, _ whole: Int) -> String {
        Units.fixed(Double(part) * 100 / Double(whole), decimals: 1) + "%"
    }
}
