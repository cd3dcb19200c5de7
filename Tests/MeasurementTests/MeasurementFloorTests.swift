import AllocatorProbe
import HarnessModel
import Measurement
import Runner
import Scenarios
import Synchronization
import TestSupport
import Testing
import WorkloadKit

#if canImport(Glibc)
    import Glibc
#endif

/// A probe whose readings race: every reading is 100 bytes, except the third, which reads 200 (a thread
/// cache fill counted on one side); a confirming reading taken right after it reads 110.
final class RacyProbe: MemoryProbe, Sendable {
    private let position = Atomic<Int>(0)
    let confirmations = Atomic<Int>(0)

    var readings: Int { position.load(ordering: .relaxed) }

    func read() -> MemoryReading {
        let index = position.add(1, ordering: .relaxed).oldValue
        let value = index == 2 ? 200 : 100
        return MemoryReading(allocator: AllocatorStats(allocatedBytes: value, residentBytes: value), rssBytes: value)
    }

    func confirmingReading() -> AllocatorStats? {
        confirmations.add(1, ordering: .relaxed)
        let value = position.load(ordering: .relaxed) == 3 ? 110 : 100
        return AllocatorStats(allocatedBytes: value, residentBytes: value)
    }

    func threadAllocatedBytes() -> UInt64? { nil }
}

/// What the harness adds to a case's figures, and what it states about the rest. In-process parts:
/// the sampler's thread, its confirming readings, the harness's own allocations after the baseline.
/// The bounds on known tiny allocations are checked end to end in MemHarnessTests/MeasurementFloorTests.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MeasurementFloorTests {
    @Test func aNewPeakIsConfirmedByASecondReadingAndTheLowerStands() throws {
        let probe = RacyProbe()
        let sampler = try Sampler(
            probe: probe, interval: .microseconds(100), capacity: 64, gauges: [], phaseNames: ["a"],
            phaseIndex: { 0 })
        try sampler.start()
        #expect(waitUntil { probe.readings >= 10 }, "the sampler took no 10 readings")
        sampler.finish()
        let output = sampler.collect()
        // The racy reading was seen (and confirmed), and the lower confirming reading stands.
        #expect(probe.confirmations.load(ordering: .relaxed) >= 2)
        #expect(output.peaks.overall.stats.allocatedBytes == 110)
        #expect(output.peaks.overall.allocatedSpreadBytes == 90)
        #expect(output.peaks.phases.map(\.stats.allocatedBytes) == [110])
        #expect(output.peaks.phases.map(\.allocatedSpreadBytes) == [90])
        #expect(!output.series.allocatedBytes.contains(200))
    }

    @Test func aPreparedSamplerStartsWithoutMovingTheLiveHeap() throws {
        let probe = try JemallocProbe()
        // The probe sees a live block of 64 KiB. The live heap is process-wide: a thread of the test runner that
        // frees a few bytes between the two readings hides them, so one of a few tries must see the whole block.
        let seen = (0..<5).map { _ -> Int in
            let before = probe.liveBytes()
            guard let block = malloc(64 << 10) else { return 0 }
            let holding = probe.liveBytes()
            free(block)
            return holding - before
        }
        #expect(seen.contains { $0 >= 64 << 10 }, "the probe saw \(seen) B of a 64 KiB block")

        let sampler = try Sampler(
            probe: probe, interval: .microseconds(200), capacity: 64, gauges: [], phaseNames: ["a"],
            phaseIndex: { 0 })
        try sampler.prepare()
        let baseline = probe.confirmedLiveBytes().bytes
        try sampler.start()
        usleep(20_000)
        let sampling = probe.confirmedLiveBytes().bytes
        sampler.finish()
        let output = sampler.collect()
        #expect(output.figures.sampleCount > 10)
        // Its thread, the thread's allocator cache and TLS exist before the baseline: starting adds nothing.
        #expect(abs(sampling - baseline) < 1024, "starting the sampler moved the live heap by \(sampling - baseline) B")
    }

    func measure(_ steps: String) throws -> CaseMeasurements {
        let catalog = WorkloadCatalog([BlockWorkload()])
        let yaml = """
            scenario: s
            workload: blocks
            strategies: [release]
            steps: \(steps)
            interval: 1ms
            settle: 10ms
            """
        let spec = try ScenarioParser(catalog: catalog).parse(yaml, file: "s.yaml")
        let caseSpec = try #require(RunPlanner.cases(of: spec, options: RunOptions(repetitions: 1)).first)
        return try CaseExecutor(catalog: catalog).measure(caseSpec)
    }

    @Test func theHarnessAllocatesNothingAfterTheBaselineOutsideTheWorkload() throws {
        // The count sees the harness's own allocations: a `repeat` step keeps a growth series.
        let repeated = try measure("[allocate, {repeat: {times: 5, warmup: 1, settle: 1ms, steps: [allocate]}}]")
        #expect(try #require(repeated.floor).harnessAllocatedBytes > 0)
        // Phase boundaries, idle and settle steps allocate nothing; the workload's blocks are its own.
        let plain = try measure("[allocate, {idle: 5ms}, {settle: 1ms}, allocate]")
        let floor = try #require(plain.floor)
        #expect(floor.harnessAllocatedBytes == 0)
        #expect(plain.peakUncertaintyBytes == floor.peakReadingSpreadBytes)
        #expect(plain.phases.allSatisfy { $0.peakReadingSpreadBytes != nil })
    }
}
