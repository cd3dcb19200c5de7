import AllocatorProbe
import HarnessModel
import Measurement
import TestSupport
import Testing
import WorkloadKit

#if canImport(Glibc)
    import Glibc
#endif

/// A workload whose one step keeps allocating (1 MiB blocks, written) up to `ceiling`.
struct RunawayWorkload: Workload {
    var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "runaway", summary: "Allocates without end (up to a ceiling, so a test can survive it).",
            strategies: [StrategyDescriptor("grow", "1 MiB blocks, one after the other")],
            parameters: [.bytes("ceiling", default: 192 << 20, range: 0...(1 << 34), "where the growth stops")],
            steps: [StepDescriptor("grow", "allocate up to the ceiling")],
            defaultSteps: ["grow"]
        )
    }

    func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase {
        RunawayCase(ceiling: parameters.bytes("ceiling"))
    }
}

final class RunawayCase: WorkloadCase {
    let ceiling: Int
    var blocks: [UnsafeMutableRawPointer] = []

    init(ceiling: Int) {
        self.ceiling = ceiling
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        blocks.reserveCapacity(ceiling >> 20)
        for _ in 0..<(ceiling >> 20) {
            guard let block = malloc(1 << 20) else { return }
            memset(block, 0x5A, 1 << 20)
            blocks.append(block)
        }
    }

    func tearDown(context: CaseContext) throws {
        for block in blocks { free(block) }
        blocks = []
    }
}

/// The limit enforced on a real case in this process (the child process's exit is tested end to end).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MemoryLimitExecutorTests {
    let executor = CaseExecutor(catalog: WorkloadCatalog([RunawayWorkload()]))

    func spec(_ budget: MemoryBudget?) -> CaseSpec {
        CaseSpec(
            scenario: "runaway", workload: "runaway", strategy: "grow", repetition: 1,
            parameters: ParameterValues(["ceiling": .bytes(192 << 20)]),
            steps: [StepInvocation(name: "grow", phase: "grow", arguments: ParameterValues())],
            samplingIntervalNanoseconds: 1_000_000, settleNanoseconds: 10_000_000, memoryBudget: budget)
    }

    @Test func aRunawayCaseIsStoppedAtItsLimitWithItsSamplesKept() throws {
        // Without a limit the probe sees the whole growth: the limit below is well inside it.
        let free = try executor.measure(spec(nil))
        #expect(free.peakAllocatedNetBytes >= 190 << 20)

        let limit = (64 << 20) + free.baselineAllocatedBytes
        let result = try executor.result(spec(MemoryBudget(limitBytes: limit, warningBytes: limit / 2)))
        guard case .killedByMemoryLimit(let hit, let killed) = result.outcome else {
            Issue.record("not killed: \(result.status) \(String(describing: result.failure))")
            return
        }
        #expect(result.failure == .memoryLimit(hit))
        #expect(hit.limitBytes == limit && hit.footprint == .allocated)

        let footprint = Double(hit.footprintBytes)
        #expect(footprint > Double(limit))
        #expect(Double(hit.overshootBytes) == footprint - Double(limit))
        #expect(hit.warningsBefore == 1)
        #expect(killed.memoryWarnings == 1)
        #expect(hit.overshootAtStopBytes != nil)
        #expect(killed.residueBytes == nil, "a killed case never tears down")

        // The samples run up to the one over the limit; every earlier one is within it.
        let series = try #require(killed.samples)
        #expect(series.count > 2)
        #expect(series.allocatedBytes.last.map(Double.init) == footprint)
        #expect(series.allocatedBytes.dropLast().allSatisfy { $0 <= limit })
        #expect(killed.peak.allocatedBytes < free.peak.allocatedBytes, "the peak stops at the kill, not at the ceiling")
        #expect(series.gaugeNames == ["memoryWarnings"])
        #expect(series.gauges[0].last == 1)
        // Phases as far as samples saw them (a setup shorter than the interval may have none).
        #expect(killed.phases.last?.name == "grow")
        #expect(killed.durationNanoseconds == series.timeNanoseconds.last)
        #expect(killed.sampling.samplerAllocatedBytes == 0)
    }

    @Test func aCaseWithinItsBudgetEndsOkAndCountsItsWarnings() throws {
        let result = try executor.measure(spec(MemoryBudget(limitBytes: 1 << 40, warningBytes: 1)))
        #expect(result.memoryWarnings == 1)
        #expect(result.samples?.gaugeNames == ["memoryWarnings"])
    }
}
