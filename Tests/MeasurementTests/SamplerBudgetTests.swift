import AllocatorProbe
import HarnessModel
import Measurement
import Synchronization
import TestSupport
import Testing
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// The sampler's side: warnings posted and the limit enforced on scripted footprints.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct SamplerBudgetTests {
    final class Calls: Sendable {
        let warnings = Atomic<Int>(0)
        let limit = Mutex<[(MemoryLimitHit, SamplerOutput)]>([])
    }

    @Test func warnsOncePerCrossingAndStopsAtTheFirstSampleOverTheLimit() throws {
        // Warning at 80 (re-armed at 72), limit 150.
        let probe = ScriptedProbe([10, 50, 85, 90, 70, 95, 60, 85, 200, 300, 400])
        let warnings = MemoryWarnings()
        let calls = Calls()
        let budget = MemoryBudget(limitBytes: 150, warningBytes: 80)
        let watch = FootprintWatch(
            budget: budget,
            warn: {
                calls.warnings.add(1, ordering: .relaxed)
                warnings.post()
            },
            limitExceeded: { hit, output in
                calls.limit.withLock { $0.append((hit, output)) }
            })
        let sampler = try Sampler(
            probe: probe, interval: .microseconds(100), capacity: 64, gauges: [warnings.gauge],
            phaseNames: ["a"], phaseIndex: { 0 }, watch: watch)
        try sampler.start()
        #expect(waitUntil { !calls.limit.withLock { $0.isEmpty } }, "the limit was never reported")
        sampler.finish()
        let output = sampler.collect()

        #expect(calls.warnings.load(ordering: .relaxed) == 3)
        #expect(warnings.postedCount == 3)
        let (hit, seen) = try #require(calls.limit.withLock { $0.first })
        #expect(calls.limit.withLock { $0.count } == 1)
        #expect(
            hit.footprintBytes == 200 && hit.limitBytes == 150 && hit.overshootBytes == 50 && hit.warningsBefore == 3)
        // Every sample up to the one over the limit, and none after it.
        #expect(seen.series.allocatedBytes == [10, 50, 85, 90, 70, 95, 60, 85, 200])
        #expect(seen.series.gauges[0] == [0, 0, 1, 1, 1, 2, 2, 3, 3])
        #expect(seen.series.timeNanoseconds.last == hit.timeNanoseconds)
        #expect(seen.peaks.overall.stats.allocatedBytes == 200)
        #expect(probe.readings == 9, "sampling ended at the sample over the limit")
        #expect(output.series.allocatedBytes == seen.series.allocatedBytes)
    }

    @Test func theResidentFootprintIsTheKernelsRSS() throws {
        // The scripted probe reports RSS as 4x allocated: 40 is over a limit of 30 only as RSS.
        let probe = ScriptedProbe([5, 10])
        let calls = Calls()
        let watch = FootprintWatch(
            budget: MemoryBudget(footprint: .resident, limitBytes: 30), warn: {},
            limitExceeded: { hit, output in
                calls.limit.withLock { $0.append((hit, output)) }
            })
        let sampler = try Sampler(
            probe: probe, interval: .microseconds(100), capacity: 64, gauges: [],
            phaseNames: ["a"], phaseIndex: { 0 }, watch: watch)
        try sampler.start()
        #expect(waitUntil { !calls.limit.withLock { $0.isEmpty } }, "the limit was never reported")
        sampler.finish()
        let hit = try #require(calls.limit.withLock { $0.first?.0 })
        #expect(hit.footprintBytes == 40 && hit.footprint == .resident)
    }

    @Test func watchingAndPostingAllocateNothingOnTheSamplerThread() throws {
        let probe = try JemallocProbe()
        let warnings = MemoryWarnings()
        let delivered = Atomic<Int>(0)
        warnings.onWarning { delivered.add(1, ordering: .relaxed) }
        // Warn from the first sample on; limit far away.
        let budget = MemoryBudget(limitBytes: 1 << 50, warningBytes: 1)
        let watch = FootprintWatch(budget: budget, warn: { warnings.post() }, limitExceeded: { _, _ in })
        let sampler = try Sampler(
            probe: probe, interval: .microseconds(200), capacity: 64, gauges: [warnings.gauge],
            phaseNames: ["x"], phaseIndex: { 0 }, watch: watch)
        try sampler.start()
        usleep(50_000)
        sampler.finish()
        let output = sampler.collect()
        #expect(waitUntil { warnings.deliveredCount >= 1 }, "the warning was never delivered")
        #expect(warnings.postedCount == 1, "one crossing, one warning")
        #expect(delivered.load(ordering: .relaxed) == 1)
        #expect(output.figures.sampleCount > 50)
        #expect(output.figures.samplerAllocatedBytes == 0)
        warnings.end()
    }
}
