import Foundation

/// Series with known change points and seeded noise, for measuring the detection (history-bench) and
/// testing it (HistoryTests): the same trials in both, so a test checks what the benchmark table says.
public enum SyntheticSeries {
    /// The noise's distribution.
    public enum Noise: Sendable, Hashable {
        /// Normal.
        case normal
        /// Student's t with 3 degrees of freedom, scaled to the same standard deviation: heavy tails, as a
        /// loaded CI machine gives now and then.
        case heavyTailed
    }

    /// `count` values around `level` with noise of standard deviation `relativeNoise` × level, stepping by
    /// `relativeStep` × level from `stepIndex` on (nil: flat).
    public static func make<Generator: RandomNumberGenerator>(
        count: Int, stepIndex: Int?, relativeStep: Double, relativeNoise: Double, noise: Noise = .normal,
        level: Double = 100 * 1_048_576, using generator: inout Generator
    ) -> [Double] {
        (0..<count).map { index in
            let stepped = stepIndex.map { index >= $0 } ?? false
            let draw = noise == .normal ? normal(&generator) : studentT3(&generator)
            return level * (1 + (stepped ? relativeStep : 0) + relativeNoise * draw)
        }
    }

    /// A standard normal draw (Box–Muller).
    static func normal<Generator: RandomNumberGenerator>(_ generator: inout Generator) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &generator)
        let u2 = Double.random(in: 0..<1, using: &generator)
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// A draw of Student's t with 3 degrees of freedom divided by √3 (its standard deviation): unit variance.
    static func studentT3<Generator: RandomNumberGenerator>(_ generator: inout Generator) -> Double {
        let z = normal(&generator)
        let chi = (0..<3).map { _ in pow(normal(&generator), 2) }.reduce(0, +)
        return z / (chi / 3).squareRoot() / 3.0.squareRoot()
    }

    /// Trials of one kind of series: how often the detection found the step at its run, found something
    /// elsewhere, or flagged a flat series.
    public struct Trials: Sendable, Hashable {
        public var trials: Int
        /// Series where a change point starts exactly at the step's run.
        public var foundAtStep: Int
        /// Series where a change point was reported at any other run (a false alarm, or the step misplaced).
        public var falseAlarms: Int
    }

    /// Runs `trials` series made by `make` and counts what `ChangePointDetection.analyse` reports.
    public static func trials<Generator: RandomNumberGenerator>(
        _ trials: Int, count: Int, stepIndex: (inout Generator) -> Int?, relativeStep: Double,
        relativeNoise: Double, noise: Noise = .normal, using generator: inout Generator
    ) -> Trials {
        var result = Trials(trials: trials, foundAtStep: 0, falseAlarms: 0)
        for _ in 0..<trials {
            let step = stepIndex(&generator)
            let values = make(
                count: count, stepIndex: step, relativeStep: relativeStep, relativeNoise: relativeNoise, noise: noise,
                using: &generator)
            let changes = ChangePointDetection.analyse(values).steps.map(\.index)
            if let step, changes.contains(step) { result.foundAtStep += 1 }
            if changes.contains(where: { $0 != step }) { result.falseAlarms += 1 }
        }
        return result
    }
}
