import AllocatorProbe
import HarnessModel

#if canImport(Glibc)
import Glibc
#endif

/// Runs one case inside the current process (the child): baseline, sampler, steps, teardown,
/// settle, residue. The parent runs this in a fresh process per case so cases cannot disturb
/// each other's heap.
public struct CaseExecutor: Sendable {
    public let catalog: WorkloadCatalog

    public init(catalog: WorkloadCatalog) {
        self.catalog = catalog
    }

    /// Runs `spec` and returns its result. Throws only when measuring is impossible; a workload
    /// error becomes a `failed` result.
    ///
    /// When the footprint exceeds `spec.memoryBudget`'s limit, `onMemoryLimit` gets the
    /// `killedByMemoryLimit` result on the sampler thread while the workload still runs (the child
    /// process writes it and exits); without a handler the case runs on and `run` returns that result.
    ///
    /// `checkAllocator: false` skips the start-up check that jemalloc is the process allocator: for
    /// running a case under a tool that replaces malloc (valgrind), whose jemalloc figures are then meaningless.
    /// An exact case (`spec.peakMode`) throws unless this process counts every allocation (`ExactPeak`).
    public func run(_ spec: CaseSpec, scratchDirectory: String, checkAllocator: Bool = true,
                    onMemoryLimit: (@Sendable (CaseResult) -> Void)? = nil) throws(HarnessError) -> CaseResult {
        let exact = spec.peakMode == .exact
        if exact && !ExactPeak.isAvailable {
            throw .exactPeakUnavailable(detail: "\(CommandLine.arguments.first ?? "this binary") does not count allocations")
        }
        let probe: JemallocProbe
        do {
            probe = try JemallocProbe()
            if checkAllocator { try probe.verifyIsProcessAllocator() }
        } catch let error as AllocatorProbeError {
            throw .probe(error)
        } catch {
            throw .caseProtocol("allocator probe: \(error)")
        }
        guard let workload = catalog.workload(named: spec.workload) else {
            throw .caseProtocol("unknown workload '\(spec.workload)'; this binary knows: \(catalog.names.joined(separator: ", "))")
        }
        var result = CaseResult(scenario: spec.scenario, workload: spec.workload, strategy: spec.strategy,
                                repetition: spec.repetition, status: .ok)
        let phaseNames = spec.phaseNames
        let context = CaseContext(strategy: spec.strategy, repetition: spec.repetition,
                                  gaugeNames: workload.descriptor.gauges.map(\.name), scratchDirectory: scratchDirectory)
        let phaseSource = context
        let limitOutcome = MemoryLimitOutcome()
        let sampler: Sampler? = spec.samplingIntervalNanoseconds > 0
            ? Sampler(probe: probe, interval: .nanoseconds(spec.samplingIntervalNanoseconds), capacity: spec.sampleCapacity,
                      gauges: context.gauges + Self.budgetGauges(spec, context), phaseNames: phaseNames,
                      phaseIndex: { phaseSource.phaseIndex.load(ordering: .relaxed) },
                      watch: Self.footprintWatch(spec, context: context, probe: probe, outcome: limitOutcome, onMemoryLimit: onMemoryLimit))
            : nil

        var phases: [(index: Int, result: PhaseResult)] = []
        // Reserved before the baseline, so recording a phase allocates nothing the case's peaks could see.
        phases.reserveCapacity(phaseNames.count + 1)
        var phaseStart: Int64 = 0
        var currentPhase = -1
        // Readings at phase boundaries, so a phase shorter than the interval still has a peak.
        var boundaryPeak = [Int](repeating: 0, count: phaseNames.count)

        // Baseline: what the harness itself holds once everything it needs exists.
        Self.settle(probe, nanoseconds: spec.settleNanoseconds)
        result.baselineAllocatedBytes = probe.allocatedBytes()
        let threadCacheBytesAtBaseline = probe.threadCacheBytes()
        limitOutcome.baselineAllocatedBytes.store(result.baselineAllocatedBytes, ordering: .releasing)
        try? KernelMemory.resetPeakRSS()
        // The exact marks restart here; the overall one is read after teardown, each phase's when it ends.
        let exactBaseline = exact ? ExactPeak.liveBytes() : nil
        let exactCallsAtBaseline = exact ? ExactPeak.allocationCalls() : nil
        if exact {
            _ = ExactPeak.takePeak()
            _ = ExactPeak.takePhasePeak()
        }
        let origin = Pacer.monotonicNanoseconds()
        let cpuOrigin = Self.processCPUNanoseconds()
        sampler?.start(originNanoseconds: origin)
        func enterPhase(_ index: Int) {
            let exactPhasePeak = exact ? ExactPeak.takePhasePeak() : nil
            let allocated = probe.allocatedBytes()
            if currentPhase >= 0 && currentPhase < phaseNames.count {
                boundaryPeak[currentPhase] = max(boundaryPeak[currentPhase], allocated)
            }
            if index < phaseNames.count { boundaryPeak[index] = max(boundaryPeak[index], allocated) }
            let now = Pacer.monotonicNanoseconds() - origin
            if currentPhase >= 0 && currentPhase < phaseNames.count {
                phases.append((currentPhase, PhaseResult(name: phaseNames[currentPhase], startNanoseconds: phaseStart,
                                                         endNanoseconds: now, peakAllocatedBytes: 0, peakResidentBytes: 0,
                                                         exactPeakLiveBytes: exactPhasePeak)))
            }
            phaseStart = now
            currentPhase = index
            context.phaseIndex.store(index, ordering: .relaxed)
        }

        var failure: String?
        var growth: [GrowthSeries] = []
        enterPhase(0)
        do {
            var workloadCase: (any WorkloadCase)? = try workload.makeCase(strategy: spec.strategy, parameters: spec.parameters, context: context)
            try workloadCase?.setUp(context: context)
            func runStep(_ step: StepInvocation) throws {
                switch step.name {
                case BuiltInStep.idle.name:
                    Pacer.sleep(for: step.arguments.duration("duration"))
                case BuiltInStep.settle.name:
                    Self.settle(probe, nanoseconds: step.arguments.duration("duration").nanoseconds)
                case BuiltInStep.repeat.name:
                    growth.append(try Self.runRepeat(step, probe: probe, runStep: runStep))
                default:
                    try workloadCase?.run(step, context: context)
                }
            }
            for (index, step) in spec.steps.enumerated() {
                enterPhase(index + 1)
                try runStep(step)
            }
            enterPhase(phaseNames.count - 1)
            try workloadCase?.tearDown(context: context)
            result.metrics = workloadCase?.metrics() ?? []
            workloadCase = nil
        } catch {
            failure = "\(error)"
        }
        enterPhase(phaseNames.count)
        let exactPeak = exact ? ExactPeak.takePeak() : nil
        let exactCallsAtEnd = exact ? ExactPeak.allocationCalls() : nil
        context.memoryWarnings.end()
        let endOfCase = Pacer.monotonicNanoseconds() - origin
        let cpuOfCase = Self.processCPUNanoseconds() - cpuOrigin
        // Stop the thread first and read the residue before the series is built: its arrays are the
        // harness's, not the case's.
        sampler?.finish()

        Self.settle(probe, nanoseconds: spec.settleNanoseconds)
        // Survivors are read after the settle (workloads may release on other threads); the
        // tracker's references go before the residue is read, so its side tables are not residue.
        let tracked = context.lifetimes.tracked()
        let survivors = context.lifetimes.survivors()
        context.lifetimes.removeAll()
        probe.flushThreadCache()
        result.residueBytes = probe.allocatedBytes() - result.baselineAllocatedBytes
        result.leaks = LeakMeasurements(tracked: tracked, survivors: survivors, growth: growth,
                                        threadCacheBytesAtBaseline: threadCacheBytesAtBaseline,
                                        threadCacheBytesAtEnd: probe.threadCacheBytes())
        result.expectation = spec.expectation
        let output = sampler?.collect()
        result.peakRSSBytes = (try? KernelMemory.status().peakRSSBytes) ?? 0
        result.durationNanoseconds = endOfCase
        result.cpuNanoseconds = cpuOfCase
        if let exactBaseline, let exactPeak, let exactCallsAtBaseline, let exactCallsAtEnd {
            result.exact = ExactPeakValues(baselineLiveBytes: exactBaseline, peakLiveBytes: exactPeak,
                                           allocationCalls: exactCallsAtEnd - exactCallsAtBaseline)
        }
        result.requestedIntervalNanoseconds = spec.samplingIntervalNanoseconds
        if let output {
            result.peak = output.peak
            result.peak.allocatedBytes = max(output.peak.allocatedBytes, boundaryPeak.max() ?? 0)
            result.sampleCount = output.sampleCount
            result.achievedIntervalNanoseconds = output.achievedIntervalNanoseconds
            result.samplerAllocatedBytes = output.samplerAllocatedBytes
            result.samples = output.series
            for position in phases.indices {
                let index = phases[position].index
                phases[position].result.peakAllocatedBytes = max(output.phasePeakAllocatedBytes[index], boundaryPeak[index])
                phases[position].result.peakResidentBytes = output.phasePeakResidentBytes[index]
            }
        } else {
            // Sampler off (`--interval 0ms`): the phase-boundary readings are the only sampled figures,
            // so the net peak and the spike excess of an exact case still mean something.
            result.peak.allocatedBytes = boundaryPeak.max() ?? 0
            for position in phases.indices {
                phases[position].result.peakAllocatedBytes = boundaryPeak[phases[position].index]
            }
        }
        result.phases = phases.map(\.result)
        if let failure {
            result.status = .failed
            result.failure = failure
        }
        return Self.applyingBudget(to: result, spec, context: context, outcome: limitOutcome)
    }

    /// Flushes this thread's cache, purges every arena, waits, and purges again.
    static func settle(_ probe: JemallocProbe, nanoseconds: Int64) {
        probe.flushThreadCache()
        probe.purgeAllArenas()
        Pacer.sleep(for: .nanoseconds(nanoseconds))
        probe.flushThreadCache()
        probe.purgeAllArenas()
    }

    /// CPU time of the whole process (every thread) so far, nanoseconds.
    static func processCPUNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
