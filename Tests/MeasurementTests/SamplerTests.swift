import AllocatorProbe
import HarnessModel
import Measurement
import Synchronization
import TestSupport
import Testing
import WorkloadKit

#if canImport(Glibc)
    import Glibc
#endif

/// A probe that replays a script of allocated values, one per reading (the last value repeats).
final class ScriptedProbe: MemoryProbe, Sendable {
    private let script: [Int]
    private let position = Atomic<Int>(0)

    init(_ script: [Int]) {
        self.script = script
    }

    var readings: Int { position.load(ordering: .relaxed) }

    func read() -> MemoryReading {
        let index = position.add(1, ordering: .relaxed).oldValue
        let value = script[min(index, script.count - 1)]
        return MemoryReading(
            allocator: AllocatorStats(
                allocatedBytes: value, activeBytes: value, residentBytes: value * 2,
                mappedBytes: value * 3, retainedBytes: 0, metadataBytes: 1),
            rssBytes: value * 4)
    }

    func threadAllocatedBytes() -> UInt64? { nil }
}

@Suite(.serialized, .timeLimit(.minutes(5)))
struct SamplerTests {
    private func waitFor(_ probe: ScriptedProbe, readings: Int) {
        #expect(waitUntil { probe.readings >= readings }, "the sampler took no \(readings) readings")
    }

    @Test func keepsPeaksOfEveryFigureAndPerPhase() throws {
        let script = [10, 50, 20, 5, 70, 30] + Array(repeating: 1, count: 100)
        let probe = ScriptedProbe(script)
        let phase = Atomic<Int>(0)
        let sampler = try Sampler(
            probe: probe, interval: .microseconds(100), capacity: 1024, gauges: [],
            phaseNames: ["a", "b"], phaseIndex: { phase.load(ordering: .relaxed) < 3 ? 0 : 1 })
        try sampler.start()
        waitFor(probe, readings: 10)
        sampler.finish()
        let output = sampler.collect()
        #expect(output.peaks.overall.stats.allocatedBytes == 70)
        #expect(output.peaks.overall.stats.residentBytes == 140)
        #expect(output.peaks.overall.stats.mappedBytes == 210)
        #expect(output.peaks.overall.rssBytes == 280)
        #expect(output.figures.sampleCount == output.series.count)
        #expect(output.series.allocatedBytes.prefix(6) == [10, 50, 20, 5, 70, 30])
        #expect(output.peaks.phases.map(\.stats.allocatedBytes) == [70, 0])
    }

    @Test func mergesRowsKeepingMaximaWhenStorageFills() throws {
        // 40 readings into 16 rows: rows are merged pairwise (twice), and the spike survives.
        var script = Array(repeating: 1, count: 40)
        script[13] = 999
        let probe = ScriptedProbe(script + [2])
        let sampler = try Sampler(
            probe: probe, interval: .microseconds(100), capacity: 16, gauges: [],
            phaseNames: ["a"], phaseIndex: { 0 })
        try sampler.start()
        waitFor(probe, readings: 45)
        sampler.finish()
        let output = sampler.collect()
        #expect(output.series.count <= 16)
        #expect(output.series.mergedSamplesPerRow >= 4)
        #expect(output.series.allocatedBytes.max() == 999)
        #expect(output.peaks.overall.stats.allocatedBytes == 999)
        // Time stays increasing after merging.
        #expect(zip(output.series.timeNanoseconds, output.series.timeNanoseconds.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func recordsGauges() throws {
        let probe = ScriptedProbe([1])
        let context = CaseContext(strategy: "s", gaugeNames: ["pending"])
        context.gauge("pending").set(42)
        let sampler = try Sampler(
            probe: probe, interval: .microseconds(100), capacity: 64, gauges: context.gauges,
            phaseNames: ["a"], phaseIndex: { 0 })
        try sampler.start()
        waitFor(probe, readings: 5)
        sampler.finish()
        let output = sampler.collect()
        #expect(output.series.gaugeNames == ["pending"])
        #expect(output.series.gauges[0].allSatisfy { $0 == 42 })
    }

    @Test func samplingAllocatesNothing() throws {
        let probe = try JemallocProbe()
        // First prove the counter sees an allocation on this thread.
        let before = try #require(probe.threadAllocatedBytes())
        let block = try #require(malloc(64 << 10))
        let after = try #require(probe.threadAllocatedBytes())
        free(block)
        #expect(after - before >= 64 << 10)

        // Then sample for a while, with gauges and a phase source, and check the sampler thread's counter.
        let context = CaseContext(strategy: "s", gaugeNames: ["a", "b"])
        let sampler = try Sampler(
            probe: probe, interval: .microseconds(200), capacity: 64, gauges: context.gauges,
            phaseNames: ["x"], phaseIndex: { 0 })
        try sampler.start()
        usleep(100_000)
        sampler.finish()
        let output = sampler.collect()
        #expect(output.figures.sampleCount > 100, "the storage filled and was merged several times")
        #expect(output.series.mergedSamplesPerRow > 1)
        #expect(output.figures.samplerAllocatedBytes == 0)
    }
}
