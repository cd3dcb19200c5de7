import AllocatorProbe
import HarnessModel
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Where a case run in this process keeps its files, and how it ends early.
public struct CaseEnvironment: Sendable {
    /// A fresh directory for the workload's files.
    public var scratchDirectory: String
    /// A file for the sampler's rows, so they survive the process (see `SampleBuffer`); nil: memory only.
    public var sampleFile: String?
    /// Where an attributed case writes the agent's record (allocation stacks, marks, modules).
    public var recordFile: String?
    /// False skips the start-up check that jemalloc is the process allocator: for a case run under a
    /// tool that replaces malloc (valgrind), whose jemalloc figures are then meaningless.
    public var checkAllocator: Bool
    /// Called on the sampler thread with the `killedByMemoryLimit` outcome while the workload still
    /// runs (a case process writes it and exits, as a phone kills an app); nil: the case runs on and
    /// `run` returns that outcome when it ends.
    public var onMemoryLimit: (@Sendable (CaseOutcome) -> Void)?

    public init(
        scratchDirectory: String, sampleFile: String? = nil, recordFile: String? = nil, checkAllocator: Bool = true,
        onMemoryLimit: (@Sendable (CaseOutcome) -> Void)? = nil
    ) {
        self.scratchDirectory = scratchDirectory
        self.sampleFile = sampleFile
        self.recordFile = recordFile
        self.checkAllocator = checkAllocator
        self.onMemoryLimit = onMemoryLimit
    }
}

/// Runs one case inside the current process: baseline, sampler, steps, teardown, settle, residue.
///
/// The runner runs this in a fresh process per case, so cases cannot disturb each other's heap.
public struct CaseExecutor: Sendable {
    public let catalog: WorkloadCatalog

    public init(catalog: WorkloadCatalog) {
        self.catalog = catalog
    }

    /// Runs `spec` and returns its outcome. Throws only when measuring is impossible; a workload that
    /// throws gives a `failed` outcome, a footprint over the memory limit `killedByMemoryLimit`.
    /// An exact case (`spec.peakMode`) throws unless this process counts every allocation (`ExactPeak`).
    public func run(_ spec: CaseSpec, in environment: CaseEnvironment) throws(MeasurementError) -> CaseOutcome {
        if spec.peakMode == .exact && !Agent.isCounting {
            throw .exactPeakUnavailable(
                detail: "this process does not count allocations: run it with \(Agent.libraryName) preloaded "
                    + "(the runner does; \(Agent.buildHint))")
        }
        if spec.attribution != nil && (!Agent.recordsStacks || environment.recordFile == nil) {
            throw .attributionUnavailable(
                detail: Agent.recordsStacks
                    ? "no file to write the record to" : "this process does not record allocation stacks")
        }
        guard let workload = catalog.workload(named: spec.workload) else {
            throw .unknownWorkload(spec.workload, known: catalog.names)
        }
        let probe: JemallocProbe
        do {
            probe = try JemallocProbe()
            if environment.checkAllocator { try probe.verifyIsProcessAllocator() }
        } catch {
            throw .probe(error)
        }
        let run = try CaseRun(spec: spec, workload: workload, probe: probe, environment: environment)
        try run.start()
        let script = run.runScript()
        let outcome = run.finish(script)
        if let recordFile = environment.recordFile, spec.attribution != nil,
            let problem = Agent.writeRecord(to: recordFile)
        {
            throw .attributionUnavailable(detail: problem)
        }
        return outcome
    }

    /// Flushes this thread's cache, purges every arena, waits, and purges again.
    static func settle(_ probe: JemallocProbe, nanoseconds: Int64) {
        probe.flushThreadCache()
        probe.purgeAllArenas()
        MonotonicClock.sleep(for: .nanoseconds(nanoseconds))
        probe.flushThreadCache()
        probe.purgeAllArenas()
    }

    /// CPU time of the whole process (every thread) so far, nanoseconds.
    static func processCPUNanoseconds() -> Int64 {
        var now = timespec()
        // CLOCK_PROCESS_CPUTIME_ID cannot fail on Linux with a valid pointer.
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}

/// What running a case's script gave, before teardown figures are read.
struct ScriptResult {
    /// The workload's error, when it threw.
    var failure: String?
    /// The workload's metrics, read after teardown.
    var metrics: [Metric]
    /// One series per `repeat` step that ran.
    var growth: [GrowthSeries]
}

/// One case in this process, from its baseline to its outcome.
final class CaseRun {
    let spec: CaseSpec
    let probe: JemallocProbe
    let context: CaseContext
    let workload: any Workload
    let sampler: Sampler?
    let limit = MemoryLimitOutcome()
    var phases: PhaseRecorder
    /// The built-in steps' names, read here: the first read of `BuiltInStep`'s statics builds them, an
    /// allocation that must not fall after the baseline.
    private let builtIn = (
        idle: BuiltInStep.idle.name, settle: BuiltInStep.settle.name, repeat: BuiltInStep.repeat.name
    )
    var baseline = Baseline()

    /// What the case starts from, read after the settle that precedes setup.
    struct Baseline {
        /// The live heap (`stats.allocated` without thread caches), the lower of two readings.
        var allocatedBytes = 0
        /// How far the two readings disagreed.
        var spreadBytes = 0
        var threadCacheBytes = 0
        var exactLiveBytes: Int?
        var exactCalls: Int?
        var originNanoseconds: Int64 = 0
        var cpuNanoseconds: Int64 = 0
        /// False when the kernel refused to reset `VmHWM`: the sampled RSS peak stands in for it.
        var peakRSSReset = true
        /// `thread.allocated` of the case's thread when the baseline was read.
        var threadAllocatedBytes: UInt64 = 0
    }

    /// The script's first step, copied before the baseline (see `start`).
    private(set) var firstStep: StepInvocation?
    /// The optional list of nested steps, named before the baseline (see `start`).
    private(set) var warmedType: ObjectIdentifier?

    /// Bytes the case's thread allocated inside the workload's calls since the baseline; the rest of what
    /// it allocated is the harness's (see `harnessAllocatedBytes()`).
    private var workloadAllocatedBytes: UInt64 = 0

    init(spec: CaseSpec, workload: any Workload, probe: JemallocProbe, environment: CaseEnvironment)
        throws(MeasurementError)
    {
        self.spec = spec
        self.probe = probe
        self.workload = workload
        // An attributed case keeps the stack of every tracked object and feeds the agent the sampled peak.
        var captureStack: (@Sendable () -> [UInt])?
        var observer: (@Sendable (Int, Int64) -> Void)?
        if spec.attribution != nil {
            captureStack = Agent.stackCapture
            observer = { footprint, time in Agent.observe(footprintBytes: footprint, timeNanoseconds: time) }
        }
        context = CaseContext(
            strategy: spec.strategy, repetition: spec.repetition,
            gaugeNames: workload.descriptor.gauges.map(\.name), scratchDirectory: environment.scratchDirectory,
            captureStack: captureStack)
        phases = PhaseRecorder(names: spec.phaseNames, exact: spec.peakMode == .exact)
        let context = context
        // A case process stopped by its memory limit ends in `onMemoryLimit`, before `run` could write the
        // record: an attributed one writes it first, so the strategy that ran out of memory keeps its stacks.
        var onMemoryLimit = environment.onMemoryLimit
        if spec.attribution != nil, let recordFile = environment.recordFile, let handOver = onMemoryLimit {
            onMemoryLimit = { killed in
                _ = Agent.writeRecord(to: recordFile)  // when it fails, the runner reports the record missing
                handOver(killed)
            }
        }
        sampler =
            spec.samplingIntervalNanoseconds > 0
            ? try Sampler(
                probe: probe, interval: .nanoseconds(spec.samplingIntervalNanoseconds), capacity: spec.sampleCapacity,
                gauges: context.gauges + CaseExecutor.budgetGauges(spec, context), phaseNames: spec.phaseNames,
                phaseIndex: { context.phaseIndex.load(ordering: .relaxed) },
                watch: CaseExecutor.footprintWatch(
                    spec, context: context, probe: probe, outcome: limit, onMemoryLimit: onMemoryLimit),
                sampleFile: environment.sampleFile,
                observer: observer)
            : nil
    }

    /// Makes the sampler's thread, settles, takes the baseline, restarts the peak marks and starts sampling.
    ///
    /// Nothing the harness does for the case allocates between the baseline and the first step but the
    /// phase bookkeeping reserved up front: the sampler's thread exists before the settle, and the
    /// baseline is the live heap (`stats.allocated` without the freed regions held in thread caches).
    func start() throws(MeasurementError) {
        // A step is copied out of the script as each phase begins; the first copy makes the runtime build
        // (and keep) the metadata of the optional list of nested steps: here, not after the baseline. A
        // debug build builds it on the copy, a release build when the type is named. Stored, so an
        // optimizer cannot drop either.
        firstStep = spec.steps.isEmpty ? nil : spec.steps[0]
        warmedType = ObjectIdentifier([HarnessModel.StepInvocation]?.self)
        try sampler?.prepare()
        // Baseline: what the harness itself holds once everything it needs exists.
        CaseExecutor.settle(probe, nanoseconds: spec.settleNanoseconds)
        do {
            try KernelMemory.resetPeakRSS()
        } catch {
            // Some containers mount /proc read-only: VmHWM then covers the whole process, so the
            // sampled RSS peak is reported instead (see `finish`).
            baseline.peakRSSReset = false
        }
        let heap = confirmedHeap()
        baseline.allocatedBytes = heap.stats.liveBytes
        baseline.spreadBytes = heap.spreadBytes
        baseline.threadCacheBytes = heap.stats.threadCacheBytes
        baseline.threadAllocatedBytes = probe.threadAllocatedBytes() ?? 0
        limit.baselineAllocatedBytes.store(baseline.allocatedBytes, ordering: .releasing)
        sampler?.setBaseline(allocatedBytes: baseline.allocatedBytes)
        if spec.peakMode == .exact {
            baseline.exactLiveBytes = Agent.liveBytes()
            baseline.exactCalls = Agent.allocationCalls()
            // The exact marks restart here; the overall one is read after teardown, each phase's when it ends.
            _ = Agent.takePeak()
            _ = Agent.takePhasePeak()
        }
        baseline.originNanoseconds = MonotonicClock.nanoseconds()
        baseline.cpuNanoseconds = CaseExecutor.processCPUNanoseconds()
        if spec.attribution != nil {
            // The live set per stack at the baseline is subtracted from the one at the peak.
            Agent.restartPeakSnapshot(levelBytes: baseline.exactLiveBytes ?? baseline.allocatedBytes)
            Agent.mark("baseline", timeNanoseconds: 0)
        }
        try sampler?.start(originNanoseconds: baseline.originNanoseconds)
    }

    /// The allocator's figures read twice, back to back: the reading with the lower live heap, and how far
    /// the two live heaps disagreed (a thread cache filling or flushing while jemalloc summed them).
    func confirmedHeap() -> (stats: AllocatorStats, spreadBytes: Int) {
        let first = probe.readAllocator()
        let second = probe.readAllocator()
        return (first.liveBytes <= second.liveBytes ? first : second, abs(first.liveBytes - second.liveBytes))
    }

    /// Bytes the case's thread allocated since the baseline outside the workload's calls: the harness's own.
    func harnessAllocatedBytes() -> Int {
        let now = probe.threadAllocatedBytes() ?? baseline.threadAllocatedBytes
        return Int(truncatingIfNeeded: now &- baseline.threadAllocatedBytes &- workloadAllocatedBytes)
    }

    /// `thread.allocated` before a call into the workload; hand it to `endWorkloadCall`.
    private func beginWorkloadCall() -> UInt64 { probe.threadAllocatedBytes() ?? 0 }

    /// Books what the case's thread allocated since `mark` to the workload.
    private func endWorkloadCall(_ mark: UInt64) {
        workloadAllocatedBytes &+= (probe.threadAllocatedBytes() ?? mark) &- mark
    }

    /// Enters phase `index` (the phase count ends the last one).
    func enterPhase(_ index: Int) {
        let heap = probe.confirmedLiveBytes()
        phases.enter(
            index, allocatedBytes: heap.bytes, spreadBytes: heap.spreadBytes,
            atNanoseconds: MonotonicClock.nanoseconds() - baseline.originNanoseconds)
        context.phaseIndex.store(index, ordering: .relaxed)
    }

    /// Sets up, runs every step and tears down; a workload error ends the script early. What the
    /// workload's calls allocate on this thread is booked to the workload, the rest to the harness.
    func runScript() -> ScriptResult {
        var result = ScriptResult(failure: nil, metrics: [], growth: [])
        enterPhase(0)
        do {
            var mark = beginWorkloadCall()
            var workloadCase: (any WorkloadCase)? = try workload.makeCase(
                strategy: spec.strategy, parameters: spec.parameters, context: context)
            try workloadCase?.setUp(context: context)
            endWorkloadCall(mark)
            // By index: iterating `enumerated()` makes the runtime build a generic type's metadata the first
            // time, an allocation of the harness after the baseline.
            for index in 0..<spec.steps.count {
                enterPhase(index + 1)
                try run(spec.steps[index], in: workloadCase, growth: &result.growth)
            }
            // `phases.names`, not `spec.phaseNames`, which builds a new array on every call.
            enterPhase(phases.names.count - 1)
            mark = beginWorkloadCall()
            try workloadCase?.tearDown(context: context)
            result.metrics = workloadCase?.metrics() ?? []
            workloadCase = nil
            endWorkloadCall(mark)
        } catch {
            result.failure = "\(error)"
        }
        enterPhase(phases.names.count)
        return result
    }

    /// Runs one step: a built-in one here, any other in the workload's case.
    private func run(_ step: StepInvocation, in workloadCase: (any WorkloadCase)?, growth: inout [GrowthSeries]) throws
    {
        switch step.name {
        case builtIn.idle:
            MonotonicClock.sleep(for: step.arguments.duration("duration"))
        case builtIn.settle:
            CaseExecutor.settle(probe, nanoseconds: step.arguments.duration("duration").nanoseconds)
        case builtIn.repeat:
            let marks = spec.attribution != nil
            let origin = baseline.originNanoseconds
            growth.append(
                try CaseExecutor.runRepeat(
                    step, probe: probe,
                    afterIteration: { iteration in
                        // The live set per stack after each iteration: growth per site.
                        if marks {
                            Agent.mark(
                                "iteration.\(step.phase).\(iteration)",
                                timeNanoseconds: MonotonicClock.nanoseconds() - origin)
                        }
                    }
                ) { try self.run($0, in: workloadCase, growth: &growth) })
        default:
            let mark = beginWorkloadCall()
            defer { endWorkloadCall(mark) }
            try workloadCase?.run(step, context: context)
        }
    }

    /// Stops the sampler, reads the residue and survivors, and builds the outcome.
    func finish(_ script: ScriptResult) -> CaseOutcome {
        let exactPeak = spec.peakMode == .exact ? Agent.takePeak() : nil
        let exactCalls = spec.peakMode == .exact ? Agent.allocationCalls() : nil
        // Up to the end of teardown, where the peaks end.
        let harnessBytes = harnessAllocatedBytes()
        context.memoryWarnings.end()
        let duration = MonotonicClock.nanoseconds() - baseline.originNanoseconds
        let cpu = CaseExecutor.processCPUNanoseconds() - baseline.cpuNanoseconds
        // Stop the thread first and read the residue before the series is built: its arrays are the
        // harness's, not the case's.
        sampler?.finish()
        let leaks = residueAndLeaks(script)
        if let killed = limit.outcome.withLock({ $0 }) { return killed }
        var exact: ExactPeakValues?
        if let live = baseline.exactLiveBytes, let peak = exactPeak, let calls = exactCalls,
            let start = baseline.exactCalls
        {
            exact = ExactPeakValues(baselineLiveBytes: live, peakLiveBytes: peak, allocationCalls: calls - start)
        }
        let output = sampler?.collect()
        let samplerBytes = output?.figures.samplerAllocatedBytes ?? 0
        let peak = phases.peak(with: output)
        let measurements = CaseMeasurements(
            baselineAllocatedBytes: baseline.allocatedBytes, peak: peak.stats,
            peakRSSBytes: peakRSS(sampled: output?.peakRSSBytes ?? 0), residueBytes: leaks.residueBytes,
            durationNanoseconds: duration, cpuNanoseconds: cpu,
            sampling: output?.figures ?? SamplingFigures(), phases: phases.results(with: output),
            metrics: script.metrics, samples: output?.series, leaks: leaks.measurements, exact: exact,
            memoryWarnings: spec.memoryBudget?.warningBytes == nil ? nil : context.memoryWarnings.postedCount,
            floor: MeasurementFloor(
                harnessAllocatedBytes: max(0, harnessBytes + samplerBytes), peakReadingSpreadBytes: peak.spreadBytes))
        if let failure = script.failure { return .failed(reason: failure, measurements: measurements) }
        return .completed(measurements: measurements)
    }

    /// Settles, reads the survivors and the residue (the live heap above the baseline), with the residue's
    /// uncertainty: what the harness allocated on this thread since the baseline (survivor lists included)
    /// and on the sampler's, plus the spreads of the baseline's and this reading.
    private func residueAndLeaks(_ script: ScriptResult) -> (residueBytes: Int, measurements: LeakMeasurements) {
        CaseExecutor.settle(probe, nanoseconds: spec.settleNanoseconds)
        // Survivors are read after the settle (workloads may release on other threads); the
        // tracker's references go before the residue is read, so its side tables are not residue.
        let tracked = context.lifetimes.tracked()
        let survivors = context.lifetimes.survivors()
        let survivorStacks = spec.attribution == nil ? nil : context.lifetimes.survivorStacks()
        context.lifetimes.removeAll()
        probe.flushThreadCache()
        let heap = confirmedHeap()
        let harness = max(0, harnessAllocatedBytes()) + (sampler?.allocatedBytes ?? 0)
        let residue = heap.stats.liveBytes - baseline.allocatedBytes
        let leaks = LeakMeasurements(
            tracked: tracked, survivors: survivors, growth: script.growth,
            threadCacheBytesAtBaseline: baseline.threadCacheBytes, threadCacheBytesAtEnd: heap.stats.threadCacheBytes,
            survivorStacks: survivorStacks,
            liveResidueUncertaintyBytes: harness + baseline.spreadBytes + heap.spreadBytes)
        return (residue, leaks)
    }

    /// The kernel's RSS high-water mark since the baseline; the sampled peak when it could not be reset or read.
    func peakRSS(sampled: Int) -> Int {
        // An unreadable /proc/self/status falls back to the sampled peak, as documented above.
        guard baseline.peakRSSReset, let status = try? KernelMemory.status() else { return sampled }
        return status.peakRSSBytes
    }
}
