import HarnessModel
import Testing
import Verdicts

/// Tolerances derived from the noise of a baseline's repetitions: the repetitions' part of the one noise model.
struct ToleranceDerivationTests {
    let derivation = ToleranceDerivation(factor: 2, minimum: 0.01)

    @Test func fromTheIntervalWithSixOrMoreRepetitions() throws {
        let noise = try #require(derivation.noise(of: [100, 103, 98, 101, 99, 100, 102, 97, 104]))
        #expect(noise.method == .interval95)
        #expect(noise.repetitions == 9)
        #expect(noise.intervalLow == 98)
        #expect(noise.intervalHigh == 103)
        #expect(abs(noise.relativeNoise - 0.03) < 1e-12)
        #expect(abs(noise.tolerance - 0.06) < 1e-12)
    }

    @Test func fromHalfTheRangeBelowSixAndNeverBelowTheMinimum() throws {
        let three = try #require(derivation.noise(of: [100, 104, 98]))
        #expect(three.method == .halfRange)
        #expect(abs(three.relativeNoise - 0.03) < 1e-12)
        #expect(three.intervalLow == nil)
        #expect(try #require(derivation.noise(of: [100, 100, 100])).tolerance == 0.01)
    }

    @Test func nothingToDeriveFrom() {
        #expect(derivation.noise(of: [100]) == nil)
        #expect(derivation.noise(of: [0, 0, 5]) == nil)
    }
}
