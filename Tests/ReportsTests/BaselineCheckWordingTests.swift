import Foundation
import HarnessModel
import Reports
import TestSupport
import Testing
import Verdicts

/// The noise-aware baseline gate and its words: a difference fails only outside the noise, and the message says by
/// how much.
struct BaselineGateTests {
    /// A run of one strategy `a` whose net peaks are `peaks`.
    func report(_ peaks: [Int]) -> RunReport {
        let cases = peaks.enumerated().map { RankingFixture.result("a", $0.offset + 1, net: $0.element) }
        return RunReport(
            generatedAt: "t", environment: ReportEnvironment.example,
            scenarios: [RankingFixture.run(cases, strategies: ["a"])])
    }

    let steady = [40_000_000, 40_100_000, 39_900_000, 40_050_000, 39_950_000, 40_000_000]

    @Test func aRegressionOutsideTheNoiseFailsAndSaysByHowMuch() throws {
        let baseline = Baseline(name: "b", report: report(steady), derivation: ToleranceDerivation())
        let noise = try #require(baseline.derivedTolerance("s/a", .peakAllocated))
        #expect(abs(noise.relativeNoise - 0.0025) < 1e-9)  // [39.9 MB, 40.1 MB] around 40 MB
        #expect(noise.tolerance == 0.01)  // 2 × 0.25% is below the 1% minimum
        let moved = report(steady.map { $0 * 108 / 100 })  // +8%
        let checks = BaselinePolicy(floorBytes: 0).worded(moved, with: baseline, baselineFile: "b.json")
        let check = try #require(checks.first)
        #expect(!check.passed)
        #expect(
            check.message
                == "s / a.peakAllocated regressed: 38.15 MiB → 41.20 MiB, +8.0% (+3.05 MiB) above the baseline, "
                + "outside its noise of ±1.0% (measured over 6 repetitions; the new median's 95% interval: "
                + "+7.7% … +8.3%); against b.json")
        #expect(check.limit == "38.15 MiB ±1.0% noise (floor 0 B)")
        // Outside the band: the interval's lower end (+7.7…%) against its edge (+1%), (1.01 − 1.077…) / 1.01.
        #expect(check.margin == "-6.7%")
    }

    @Test func aMedianThatMovedWithinTheNoisePasses() throws {
        // A noisy figure: ±10% around 1 MB. Its new median is 6% higher, yet the new interval reaches back
        // inside the baseline's band, so it is noise, not a regression.
        let noisy = [1_000_000, 1_100_000, 900_000, 1_050_000, 950_000, 1_000_000, 1_020_000, 980_000, 1_000_000]
        let baseline = Baseline(name: "b", report: report(noisy), derivation: ToleranceDerivation())
        let tolerance = try #require(baseline.derivedTolerance("s/a", .peakAllocated)?.tolerance)
        #expect(abs(tolerance - 0.10) < 1e-9)  // the interval is [950 kB, 1.05 MB]: ±5%, doubled
        let later = report(noisy.map { $0 * 106 / 100 })
        let check = try #require(BaselinePolicy(floorBytes: 0).worded(later, with: baseline, baselineFile: "b").first)
        #expect(check.passed)
        #expect(check.message.contains("+6.0% (+58.59 KiB) above the baseline, within its noise of ±10.0%"))
        #expect(check.margin.hasPrefix("+"), "a check that passes is inside its band: \(check.margin)")
        // The same medians without the noise (a baseline saved before it was kept) at a flat 1%: a failure.
        let flat = Baseline(name: "b", cases: baseline.cases)
        let strict = try #require(
            BaselinePolicy(tolerance: 0.01, floorBytes: 0).worded(
                report(noisy.map { $0 * 120 / 100 }), with: flat,
                baselineFile: "b"
            ).first)
        #expect(!strict.passed)
        #expect(strict.message.contains("outside the tolerance of ±1%"))
    }

    @Test func theFloorAndExplicitTolerancesStillApply() throws {
        let baseline = Baseline(name: "b", report: report(steady), derivation: ToleranceDerivation())
        let moved = report(steady.map { $0 * 108 / 100 })
        let floored = try #require(
            BaselinePolicy(floorBytes: 4_000_000).worded(moved, with: baseline, baselineFile: "b").first)
        #expect(floored.passed)
        #expect(floored.message.contains("within the floor of 3.81 MiB"))
        // --tolerance overrides the derived one for every figure.
        let wide = try #require(
            BaselinePolicy(tolerance: 0.10, floorBytes: 0).worded(moved, with: baseline, baselineFile: "b").first)
        #expect(wide.passed)
        #expect(wide.limit == "38.15 MiB ±10% (floor 0 B)")
    }

    @Test func improvementsFailOnlyWhenAsked() throws {
        let baseline = Baseline(name: "b", report: report(steady), derivation: ToleranceDerivation())
        let better = report(steady.map { $0 * 90 / 100 })
        let check = try #require(BaselinePolicy(floorBytes: 0).worded(better, with: baseline, baselineFile: "b").first)
        #expect(check.passed)
        #expect(check.message.contains("improved: 38.15 MiB → 34.33 MiB, -10.0% (-3.81 MiB) below the baseline"))
        #expect(
            !BaselinePolicy(floorBytes: 0, failOnImprovement: true).worded(better, with: baseline, baselineFile: "b")
                .allSatisfy { $0.passed })
    }

    @Test func baselinesWithoutNoiseStillReadAndRoundTrip() throws {
        let old = #"{"cases":{"s/a":{"peakAllocated":40000000}},"format":"memharness-baseline/1","name":"old"}"#
        let baseline = try JSONDecoder().decode(Baseline.self, from: Data(old.utf8))
        #expect(baseline.noise == nil)
        let check = try #require(
            BaselinePolicy().worded(report(steady.map { $0 * 109 / 100 }), with: baseline, baselineFile: "b").first)
        #expect(check.passed, "the 10% default holds a baseline without noise")
        let saved = Baseline(name: "b", report: report(steady), derivation: ToleranceDerivation())
        let back = try JSONDecoder().decode(Baseline.self, from: JSONEncoder().encode(saved))
        #expect(back == saved)
    }
}

extension BaselinePolicy {
    /// The checks of `compare`, worded as the record keeps them.
    func worded(_ report: RunReport, with baseline: Baseline, baselineFile: String) -> [CheckResult] {
        CheckWording.results(compare(report, with: baseline, baselineFile: baselineFile))
    }
}
