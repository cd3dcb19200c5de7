import AllocatorProbe
import HarnessModel
import Synchronization
import WorkloadKit

/// What a memory-limit stop leaves for `CaseExecutor.run` when it runs in-process (no exit).
final class MemoryLimitOutcome: Sendable {
    /// The case's baseline, stored once it is known (the sampler exists before it is read).
    let baselineAllocatedBytes = Atomic<Int>(0)
    /// The `killedByMemoryLimit` outcome, once the sampler saw the limit exceeded.
    let outcome = Mutex<CaseOutcome?>(nil)
}

extension CaseExecutor {
    /// Gauges the sampler records besides the workload's: `memoryWarnings` when warnings are on.
    static func budgetGauges(_ spec: CaseSpec, _ context: CaseContext) -> [Gauge] {
        spec.memoryBudget?.warningBytes == nil ? [] : [context.memoryWarnings.gauge]
    }

    /// The sampler's watch for `spec`'s memory budget; nil without one.
    ///
    /// At the first sample over the limit the sampler stops, and this builds the killed outcome from
    /// what it sampled. With `onMemoryLimit` (a case process) that outcome is handed over at once,
    /// and the handler ends the process; without (in-process runs) it waits in `outcome` for `run`
    /// to return once the case has finished on its own, since a thread cannot be stopped.
    static func footprintWatch(
        _ spec: CaseSpec, context: CaseContext, probe: JemallocProbe, outcome: MemoryLimitOutcome,
        onMemoryLimit: (@Sendable (CaseOutcome) -> Void)?
    ) -> FootprintWatch? {
        guard let budget = spec.memoryBudget, !budget.isEmpty else { return nil }
        let warnings = context.memoryWarnings
        return FootprintWatch(
            budget: budget, warn: { warnings.post() },
            limitExceeded: { hit, output in
                var hit = hit
                let reading = probe.read()
                let footprintNow = hit.footprint == .allocated ? reading.allocator.allocatedBytes : reading.rssBytes
                hit.overshootAtStopBytes = footprintNow - hit.limitBytes
                let killed = killedOutcome(
                    spec, hit: hit, output: output,
                    baselineAllocatedBytes: outcome.baselineAllocatedBytes.load(ordering: .acquiring))
                if let onMemoryLimit {
                    onMemoryLimit(killed)
                } else {
                    outcome.outcome.withLock { $0 = killed }
                }
            })
    }

    /// The outcome of a case stopped by its memory limit: every sample up to the stop, peaks over
    /// them, phases as far as they got, and no residue (the case never tore down).
    static func killedOutcome(
        _ spec: CaseSpec, hit: MemoryLimitHit, output: SamplerOutput, baselineAllocatedBytes: Int
    ) -> CaseOutcome {
        // The kernel's high-water mark covers the samples' span; the sampled one when it cannot be read.
        let peakRSS = (try? KernelMemory.status().peakRSSBytes) ?? output.peaks.overall.rssBytes
        let measurements = CaseMeasurements(
            baselineAllocatedBytes: baselineAllocatedBytes, peak: output.peaks.overall.stats, peakRSSBytes: peakRSS,
            residueBytes: nil, durationNanoseconds: hit.timeNanoseconds, sampling: output.figures,
            phases: output.peaks.phaseResults(spannedBy: output.series, endNanoseconds: hit.timeNanoseconds),
            samples: output.series,
            memoryWarnings: spec.memoryBudget?.warningBytes == nil ? nil : hit.warningsBefore)
        return .killedByMemoryLimit(hit: hit, measurements: measurements)
    }
}
