import AllocatorProbe
import HarnessModel
import Synchronization

/// What a memory-limit stop leaves for `CaseExecutor.run` when it runs in-process (no exit).
final class MemoryLimitOutcome: Sendable {
    /// The case's baseline, stored once it is known (the sampler exists before it is read).
    let baselineAllocatedBytes = Atomic<Int>(0)
    /// The `killedByMemoryLimit` result, once the sampler saw the limit exceeded.
    let result = Mutex<CaseResult?>(nil)
}

extension CaseExecutor {
    /// Gauges the sampler records besides the workload's: `memoryWarnings` when warnings are on.
    static func budgetGauges(_ spec: CaseSpec, _ context: CaseContext) -> [Gauge] {
        spec.memoryBudget?.warningBytes == nil ? [] : [context.memoryWarnings.gauge]
    }

    /// The sampler's watch for `spec`'s memory budget; nil without one.
    ///
    /// At the first sample over the limit the sampler stops, and this builds the killed result from
    /// what it sampled. With `onMemoryLimit` (the child process) that result is handed over at once,
    /// and the handler ends the process; without (in-process runs) it waits in `outcome` for `run`
    /// to return once the case has finished on its own, since a thread cannot be stopped.
    static func footprintWatch(_ spec: CaseSpec, context: CaseContext, probe: JemallocProbe, outcome: MemoryLimitOutcome,
                               onMemoryLimit: (@Sendable (CaseResult) -> Void)?) -> FootprintWatch? {
        guard let budget = spec.memoryBudget, !budget.isEmpty else { return nil }
        let warnings = context.memoryWarnings
        return FootprintWatch(budget: budget, warn: { warnings.post() }, limitExceeded: { hit, output in
            var result = killedResult(spec, hit: hit, output: output, baselineAllocatedBytes: outcome.baselineAllocatedBytes.load(ordering: .acquiring))
            let reading = probe.read()
            let footprintNow = hit.footprint == .allocated ? reading.allocator.allocatedBytes : reading.rssBytes
            result.metrics.append(Metric(name: MemoryBudgetMetric.overshootAtExit, value: Double(footprintNow - hit.limitBytes), unit: .bytes))
            if let onMemoryLimit {
                onMemoryLimit(result)
            } else {
                outcome.result.withLock { $0 = result }
            }
        })
    }

    /// The result of a case stopped by its memory limit: every sample up to the stop, peaks over
    /// them, phases as far as they got, and no residue (the case never tore down).
    static func killedResult(_ spec: CaseSpec, hit: MemoryLimitHit, output: SamplerOutput, baselineAllocatedBytes: Int) -> CaseResult {
        var result = CaseResult(scenario: spec.scenario, workload: spec.workload, strategy: spec.strategy,
                                repetition: spec.repetition, status: .killedByMemoryLimit,
                                failure: killedDescription(hit))
        result.baselineAllocatedBytes = baselineAllocatedBytes
        result.peak = output.peak
        result.peakRSSBytes = (try? KernelMemory.status().peakRSSBytes) ?? output.peakRSSBytes
        result.durationNanoseconds = hit.timeNanoseconds
        result.sampleCount = output.sampleCount
        result.requestedIntervalNanoseconds = spec.samplingIntervalNanoseconds
        result.achievedIntervalNanoseconds = output.achievedIntervalNanoseconds
        result.samplerAllocatedBytes = output.samplerAllocatedBytes
        result.samples = output.series
        result.phases = phases(of: output, endNanoseconds: hit.timeNanoseconds)
        result.metrics = [
            Metric(name: MemoryBudgetMetric.killedAt, value: Double(hit.timeNanoseconds) / 1e6, unit: .milliseconds),
            Metric(name: MemoryBudgetMetric.footprintAtKill, value: Double(hit.footprintBytes), unit: .bytes),
            Metric(name: MemoryBudgetMetric.overshoot, value: Double(hit.overshootBytes), unit: .bytes),
            Metric(name: MemoryBudgetMetric.warnings, value: Double(hit.warningsBefore), unit: .count),
        ]
        return result
    }

    /// `killed by memory limit at 1.42 s, 300.40 MiB allocated (limit 300.00 MiB), after 1 memory warning`.
    static func killedDescription(_ hit: MemoryLimitHit) -> String {
        var text = "killed by memory limit at \(Units.fixed(Double(hit.timeNanoseconds) / 1e9, decimals: 2)) s, "
            + "\(Units.formatBytes(hit.footprintBytes)) \(hit.footprint.rawValue) (limit \(Units.formatBytes(hit.limitBytes)))"
        if hit.warningsBefore > 0 {
            text += ", after \(hit.warningsBefore) memory warning\(hit.warningsBefore == 1 ? "" : "s")"
        }
        return text
    }

    /// Phases as the samples saw them: each from its first sample to the next phase's first (the
    /// last one to `endNanoseconds`), with the sampler's per-phase peaks.
    static func phases(of output: SamplerOutput, endNanoseconds: Int64) -> [PhaseResult] {
        let series = output.series
        var starts: [(index: Int, time: Int64)] = []
        for row in 0..<series.count where starts.last?.index != series.phaseIndex[row] {
            starts.append((series.phaseIndex[row], series.timeNanoseconds[row]))
        }
        return starts.enumerated().compactMap { position, start in
            guard start.index >= 0 && start.index < series.phaseNames.count else { return nil }
            let end = position + 1 < starts.count ? starts[position + 1].time : endNanoseconds
            return PhaseResult(name: series.phaseNames[start.index], startNanoseconds: start.time, endNanoseconds: end,
                               peakAllocatedBytes: output.phasePeakAllocatedBytes[start.index],
                               peakResidentBytes: output.phasePeakResidentBytes[start.index])
        }
    }

    /// The result `run` returns: the killed one if the limit was exceeded in-process, otherwise
    /// `result` with the warnings posted when warnings were on.
    static func applyingBudget(to result: CaseResult, _ spec: CaseSpec, context: CaseContext, outcome: MemoryLimitOutcome) -> CaseResult {
        if let killed = outcome.result.withLock({ $0 }) { return killed }
        var result = result
        if spec.memoryBudget?.warningBytes != nil {
            result.metrics.append(Metric(name: MemoryBudgetMetric.warnings, value: Double(context.memoryWarnings.postedCount), unit: .count))
        }
        return result
    }
}
