import AllocatorProbe
import CalibrationWorkload
import Foundation
import HarnessModel
import Measurement
import TestSupport
import Testing
import WorkloadKit

/// Runs calibration cases in this process and checks the measured figures against the truth,
/// which each test computes from the allocator (`nallocx`), never from a written-down number.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct CalibrationTests {
    let executor = CaseExecutor(catalog: WorkloadCatalog([CalibrationWorkload()]))

    func spec(_ strategy: String, _ parameters: [String: ParameterValue] = [:], hold: Duration = .milliseconds(100))
        -> CaseSpec
    {
        var values = ParameterValues(
            Dictionary(
                uniqueKeysWithValues: CalibrationWorkload().descriptor.parameters.map { ($0.name, $0.defaultValue) }))
        for (name, value) in parameters { values[name] = value }
        let idle = StepInvocation(
            name: "idle", phase: "idle",
            arguments: ParameterValues(["duration": .duration(nanoseconds: hold.nanoseconds)]))
        return CaseSpec(
            scenario: "calibration", workload: "calibration", strategy: strategy, repetition: 1, parameters: values,
            steps: [
                StepInvocation(name: "allocate", phase: "allocate", arguments: ParameterValues()), idle,
                StepInvocation(name: "release", phase: "release", arguments: ParameterValues()),
            ],
            samplingIntervalNanoseconds: 1_000_000, settleNanoseconds: 50_000_000
        )
    }

    @Test func largeHoldPeakIsWithinTwoPercentOfItsSizeClassBytes() throws {
        let size = 64 << 20
        let result = try executor.measure(spec("hold-large", ["holdSize": .bytes(size)]))
        let truth = AllocatorCost.bytes(forRequest: size)
        #expect(result.metric("heldBytes")?.value == Double(truth), "the workload holds exactly the size-class bytes")
        let error = Double(result.peakAllocatedNetBytes - truth) / Double(truth)
        #expect(abs(error) < 0.02, "peak \(result.peakAllocatedNetBytes) vs truth \(truth): \(error * 100)%")
        let allocatePhase = try #require(result.phases.first { $0.name == "idle" })
        #expect(
            abs(Double(allocatePhase.peakAllocatedBytes - result.baselineAllocatedBytes - truth)) < Double(truth) * 0.02
        )
        #expect(result.sampling.sampleCount > 50)
        #expect(result.sampling.samplerAllocatedBytes == 0)
    }

    @Test func smallObjectsPeakIsWithinTwoPercentOfTheirSizeClassBytes() throws {
        let count = 16_384
        let size = 1000
        let result = try executor.measure(
            spec("hold-small-objects", ["objectCount": .count(count), "objectSize": .bytes(size)]),
            scratchDirectory: "/tmp")
        let truth = count * AllocatorCost.bytes(forRequest: size)
        let error = Double(result.peakAllocatedNetBytes - truth) / Double(truth)
        #expect(abs(error) < 0.02, "peak \(result.peakAllocatedNetBytes) vs truth \(truth): \(error * 100)%")
    }

    /// The probe side of this check is `residueShowsMemoryThatOutlivesTheCase`.
    @Test func churnLeavesLessThan256KiBBehind() throws {
        let result = try executor.measure(spec("churn", ["churnOperations": .count(500_000)]))
        #expect(result.metric("operations")?.value == 500_000)
        expectMetrics(result.metrics, declaredBy: CalibrationWorkload().descriptor, complete: true)
        let residue = try #require(result.residueBytes)
        #expect(residue < 256 << 10, "residue \(residue) bytes")
        #expect(result.peakAllocatedNetBytes < 1 << 20, "at most 64 blocks of 4 KiB alive, plus the harness's own")
    }

    @Test func spikesReportOneSpikeAsTheirTopAndLeaveNothing() throws {
        let size = 3 << 20
        let result = try executor.measure(
            spec(
                "spikes",
                ["spikeCount": .count(20), "spikeSize": .bytes(size), "spikeGap": .duration(nanoseconds: 100_000)]),
            scratchDirectory: "/tmp")
        #expect(result.metric("heldBytes")?.value == Double(AllocatorCost.bytes(forRequest: size)))
        #expect(result.metric("operations")?.value == 20)
        let residue = try #require(result.residueBytes)
        #expect(residue < 256 << 10, "residue \(residue) bytes")
    }

    @Test func crossThreadHoldsItsFullQueueAtTheTopAndFreesEverything() throws {
        let depth = 1000
        let size = 3000
        let result = try executor.measure(
            spec(
                "cross-thread",
                [
                    "crossThreadDepth": .count(depth), "crossThreadItems": .count(20_000),
                    "objectSize": .bytes(size),
                ]))
        let truth = depth * AllocatorCost.bytes(forRequest: size) + AllocatorCost.bytes(forRequest: depth * 8)
        #expect(result.metric("heldBytes")?.value == Double(truth))
        #expect(result.metric("operations")?.value == 20_000)
        // The top lasts until the consumer starts; the sampler may or may not see all of it, never more.
        #expect(
            result.peakAllocatedNetBytes < truth + truth / 10, "peak \(result.peakAllocatedNetBytes) vs truth \(truth)")
        let residue = try #require(result.residueBytes)
        #expect(residue < 256 << 10, "residue \(residue) bytes")
    }

    @Test func residueShowsMemoryThatOutlivesTheCase() throws {
        // The residue must see a block allocated after the baseline and still alive after the settle.
        var kept: UnsafeMutableRawPointer?
        let size = 2 << 20
        let spec = spec("churn", ["churnOperations": .count(1000)])
        final class Keeper: @unchecked Sendable { var block: UnsafeMutableRawPointer? }
        let keeper = Keeper()
        let thread = Thread {
            usleep(120_000)  // after the 50 ms baseline settle, during the 100 ms idle
            keeper.block = malloc(size)
        }
        thread.start()
        let result = try executor.measure(spec)
        kept = keeper.block
        defer { free(kept) }
        #expect(kept != nil)
        let residue = try #require(result.residueBytes)
        #expect(residue >= AllocatorCost.bytes(forRequest: size) / 2, "residue \(residue)")
    }
}
