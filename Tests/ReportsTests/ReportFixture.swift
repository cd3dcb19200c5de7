import HarnessModel
import TestSupport

/// A small deterministic run: two strategies x two repetitions, one failed case, gauges and metrics.
enum ReportFixture {
    static func series(peak: Int) -> SampleSeries {
        var series = SampleSeries(phaseNames: ["setup", "burst", "teardown"], gaugeNames: ["pending"])
        for row in 0..<6 {
            series.timeNanoseconds.append(Int64(row) * 1_000_000)
            let value = 1_000_000 + peak * [0, 1, 3, 4, 2, 0][row] / 4
            series.allocatedBytes.append(value)
            series.activeBytes.append(value + 4096)
            series.residentBytes.append(value + 1_000_000)
            series.mappedBytes.append(value + 2_000_000)
            series.retainedBytes.append(500_000)
            series.metadataBytes.append(200_000)
            series.rssBytes.append(value + 20_000_000)
            series.phaseIndex.append([0, 1, 1, 1, 2, 2][row])
            series.gauges[0].append(Int64([0, 3, 7, 9, 1, 0][row]))
        }
        return series
    }

    static func result(_ strategy: String, _ repetition: Int, peak: Int) -> CaseResult {
        CaseResult.draft(scenario: "live-query", workload: "live-query", strategy: strategy, repetition: repetition) {
            result in
            draftFigures(&result, repetition: repetition, peak: peak)
        }
    }

    static func draftFigures(_ result: inout MeasurementsDraft, repetition: Int, peak: Int) {
        result.baselineAllocatedBytes = 1_000_000
        result.peak = AllocatorStatsValues(
            allocatedBytes: 1_000_000 + peak, activeBytes: 1_004_096 + peak, residentBytes: 2_000_000 + peak,
            mappedBytes: 3_000_000 + peak, retainedBytes: 500_000, metadataBytes: 200_000)
        result.peakRSSBytes = 21_000_000 + peak
        result.residueBytes = 12_288 * repetition
        result.durationNanoseconds = 2_500_000_000 + Int64(repetition) * 1_000_000
        result.sampling = SamplingFigures(
            sampleCount: 6, requestedIntervalNanoseconds: 1_000_000, achievedIntervalNanoseconds: 1_004_000)
        result.phases = [
            PhaseResult(
                name: "setup", startNanoseconds: 0, endNanoseconds: 1_000_000, peakAllocatedBytes: 1_000_000,
                peakResidentBytes: 2_000_000),
            PhaseResult(
                name: "burst", startNanoseconds: 1_000_000, endNanoseconds: 4_000_000,
                peakAllocatedBytes: 1_000_000 + peak,
                peakResidentBytes: 2_000_000 + peak),
            PhaseResult(
                name: "teardown", startNanoseconds: 4_000_000, endNanoseconds: 6_000_000,
                peakAllocatedBytes: 1_000_000 + peak / 2, peakResidentBytes: 2_000_000),
        ]
        result.metrics = [
            Metric(name: "callbacksDelivered", value: Double(100 + repetition), unit: .count),
            Metric(name: "stalenessP99", value: 12.5 * Double(repetition), unit: .milliseconds),
        ]
        result.samples = series(peak: peak)
    }

    /// The same run measured with `--peak exact`: every ok case also has exact peaks, the burst's
    /// spike `spike` bytes above what the sampler saw.
    static func exactReport(spike: Int = 3_000_000) -> RunReport {
        var report = report
        for scenario in report.scenarios.indices {
            for index in report.scenarios[scenario].cases.indices {
                let old = report.scenarios[scenario].cases[index]
                guard old.status == .ok else { continue }
                let peak = Int(old.completed?.peakAllocatedNetBytes ?? 0)
                report.scenarios[scenario].cases[index] = CaseResult.draft(
                    scenario: old.scenario, workload: old.workload, strategy: old.strategy, repetition: old.repetition
                ) { result in
                    draftFigures(&result, repetition: old.repetition, peak: peak)
                    let baseline = 900_000
                    result.exact = ExactPeakValues(
                        baselineLiveBytes: baseline, peakLiveBytes: baseline + peak + spike,
                        allocationCalls: 40_000 + old.repetition)
                    for phase in result.phases.indices {
                        let sampledNet = result.phases[phase].peakAllocatedBytes - result.baselineAllocatedBytes
                        result.phases[phase].exactPeakLiveBytes =
                            baseline + sampledNet + (result.phases[phase].name == "burst" ? spike : 1_024)
                    }
                }
            }
        }
        return report
    }

    /// The exact run with a measurement floor in every ok case: the harness allocated 64 B after the
    /// baseline, the readings that set the sampled peaks disagreed by 1 KiB per repetition (the burst's), and
    /// the residue is read from the live heap.
    static func floorReport() -> RunReport {
        var report = exactReport()
        for scenario in report.scenarios.indices {
            for index in report.scenarios[scenario].cases.indices {
                let old = report.scenarios[scenario].cases[index]
                guard let measurements = old.completed else { continue }
                var draft = MeasurementsDraft(measurements)
                draft.floor = MeasurementFloor(harnessAllocatedBytes: 64, peakReadingSpreadBytes: 1024 * old.repetition)
                for phase in draft.phases.indices {
                    draft.phases[phase].peakReadingSpreadBytes =
                        draft.phases[phase].name == "burst" ? 1024 * old.repetition : 0
                }
                draft.leaks = LeakMeasurements(
                    threadCacheBytesAtBaseline: 9000, threadCacheBytesAtEnd: 70_000, liveResidueUncertaintyBytes: 512)
                report.scenarios[scenario].cases[index].outcome = .completed(measurements: draft.measurements)
            }
        }
        return report
    }

    static var report: RunReport {
        let crashed = CaseResult.draft(
            scenario: "live-query", workload: "live-query", strategy: "deliver-on", repetition: 1, status: .crashed,
            failure: "Fatal error, \"quoted\" | piped")
        let scenario = ScenarioRun(
            name: "live-query", file: "Scenarios/live-query.yaml", workload: "live-query",
            summary: "Unbounded dispatch vs signal-next.",
            parameters: [
                NamedValue(name: "payloadSize", value: "4.00 KiB"), NamedValue(name: "writeRate", value: "500/s"),
            ],
            strategies: ["unbounded-dispatch", "signal-next", "deliver-on"], steps: ["burst"], repetitions: 2,
            cases: [
                result("unbounded-dispatch", 1, peak: 142_000_000), result("signal-next", 1, peak: 10_000_000),
                result("unbounded-dispatch", 2, peak: 150_000_000), result("signal-next", 2, peak: 10_400_000),
                crashed,
            ]
        )
        let environment = EnvironmentInfo(
            toolVersion: "0.1.0", jemallocVersion: "5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c",
            jemallocSettings: ["opt.dirty_decay_ms": "10000", "opt.tcache": "true"], swiftVersion: "6.3",
            operatingSystem: "Debian GNU/Linux 12 (bookworm)", kernel: "Linux 6.1 x86_64", cpuModel: "Example CPU",
            cpuCount: 2, memoryBytes: 24 << 30, requestedIntervalNanoseconds: 1_000_000
        )
        return RunReport(generatedAt: "2026-01-01T00:00:00Z", environment: environment, scenarios: [scenario])
    }
}

extension ReportFixture {
    /// The run with `repetitions: auto` (target ±2%, 6 to 9): `unbounded-dispatch` steady, stopped after 6;
    /// `signal-next` noisy, stopped at the maximum of 9; `deliver-on` crashed, stopped after 6.
    static var autoReport: RunReport {
        var report = report
        let steady = [142_000_000, 142_100_000, 141_900_000, 142_050_000, 141_950_000, 142_000_000]
        let noisy =
            [10_000_000, 10_400_000, 9_600_000, 11_000_000, 10_100_000, 9_900_000, 10_200_000, 9_000_000]
            + [10_050_000]
        var cases: [CaseResult] = []
        for repetition in 1...9 {
            if repetition <= 6 { cases.append(result("unbounded-dispatch", repetition, peak: steady[repetition - 1])) }
            cases.append(result("signal-next", repetition, peak: noisy[repetition - 1]))
            if repetition <= 6 {
                cases.append(
                    CaseResult.draft(
                        scenario: "live-query", workload: "live-query", strategy: "deliver-on",
                        repetition: repetition, status: repetition == 6 ? .crashed : .ok, failure: "Fatal error"
                    ) { draftFigures(&$0, repetition: repetition, peak: 6_000_000 + repetition * 1_000) })
            }
        }
        report.scenarios[0].cases = cases
        report.scenarios[0].repetitions = 9
        report.scenarios[0].adaptiveRepetitions = AdaptiveRepetitions(target: 0.02, minimum: 6, maximum: 9)
        return report
    }
}
