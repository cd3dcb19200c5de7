import AllocatorProbe
import HarnessModel
import Measurement
import Testing
import WorkloadKit

#if canImport(Glibc)
    import Glibc
#endif

/// The case sequence on its own, as `expectMemory` drives it: a block held across a phase is its peak (read at
/// the phase's end even without a sampler), a block kept is its residue, a tracked object kept is a survivor.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct CaseSequenceTests {
    private static let blockBytes = 8 << 20

    private func sequence(sampling: Bool) throws -> CaseSequence {
        let probe = try JemallocProbe()
        return try CaseSequence(probe: probe, phaseNames: ["hold"], settle: .milliseconds(5)) {
            phaseIndex throws(MeasurementError) in
            sampling
                ? try Sampler(
                    probe: probe, interval: .milliseconds(1), gauges: [], phaseNames: ["hold"], phaseIndex: phaseIndex)
                : nil
        }
    }

    @Test(arguments: [false, true])
    func aBlockHeldAcrossThePhaseIsItsPeakAndAKeptOneTheResidue(sampling: Bool) throws {
        let sequence = try sequence(sampling: sampling)
        let tracker = LifetimeTracker()
        try sequence.start()
        sequence.enterPhase(0)
        let mark = sequence.beginWorkloadCall()
        let block = try #require(malloc(Self.blockBytes))
        memset(block, 1, Self.blockBytes)
        let kept = Box()
        tracker.track(kept, as: "Box")
        sequence.endWorkloadCall(mark)
        sequence.enterPhase(1)
        sequence.stop()
        sequence.settle()
        let residue = sequence.residue(tracked: tracker, growth: [])
        let measurements = sequence.measurements(residue: residue)
        free(block)
        withExtendedLifetime(kept) {}
        // Within the stated floors: the peak's (the harness's allocations, the reading spread) and the residue's; and
        // 16 KiB for the test runner's other threads, which may free a few blocks between the baseline and the peak
        // (the figures are process-wide: 272 B less than the block was read once in a loaded `make test`).
        let peakFloor = try #require(measurements.peakUncertaintyBytes) + 16 << 10
        #expect(measurements.peakAllocatedNetBytes >= Self.blockBytes - peakFloor)
        #expect(measurements.phases.map(\.name) == ["hold"])
        #expect(
            measurements.phases.first.map { $0.peakAllocatedBytes - measurements.baselineAllocatedBytes } ?? 0
                >= Self.blockBytes - peakFloor)
        #expect(residue.residueBytes >= Self.blockBytes - residue.leaks.residueUncertaintyBytes)
        #expect(residue.leaks.survivors == [TypeCount(typeName: "Box", count: 1)])
        #expect((measurements.sampling.sampleCount > 0) == sampling)
    }
}

private final class Box {}
