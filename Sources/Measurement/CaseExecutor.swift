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
        let script = spec.heapGraph == nil ? run.runScript() : run.runScriptOnItsOwnThread()
        let outcome = run.finish(script)
        if let recordFile = environment.recordFile, spec.attribution != nil,
            let problem = Agent.writeRecord(to: recordFile)
        {
            throw .attributionUnavailable(detail: problem)
        }
        return outcome
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

/// One case in this process, from its baseline to its outcome: the workload's part; the measuring is the
/// case sequence's (`CaseSequence`).
final class CaseRun {
    let spec: CaseSpec
    let context: CaseContext
    let workload: any Workload
    let sequence: CaseSequence
    let limit: MemoryLimitOutcome
    /// The built-in steps' names, read here: the first read of `BuiltInStep`'s statics builds them, an
    /// allocation that must not fall after the baseline.
    private let builtIn = (
        idle: BuiltInStep.idle.name, settle: BuiltInStep.settle.name, repeat: BuiltInStep.repeat.name
    )

    /// The script's first step, copied before the baseline (see `start`).
    private(set) var firstStep: StepInvocation?
    /// The optional list of nested steps, named before the baseline (see `start`).
    private(set) var warmedType: ObjectIdentifier?

    var probe: JemallocProbe { sequence.probe }
    /// The heap graph of an instrumented case (`--heap-graph`); nil otherwise.
    private let heapGraph: CaseHeapGraph?

    init(spec: CaseSpec, workload: any Workload, probe: JemallocProbe, environment: CaseEnvironment)
        throws(MeasurementError)
    {
        self.spec = spec
        self.workload = workload
        // An attributed case keeps the stack of every tracked object. The agent's `peak` snapshot follows its exact
        // count (stacks imply counting): the sampler hands it nothing.
        let captureStack: (@Sendable () -> [UInt])? = spec.attribution != nil ? Agent.stackCapture : nil
        let heapGraph = spec.heapGraph.map(CaseHeapGraph.init)
        self.heapGraph = heapGraph
        var heapCapture: (@Sendable (String) -> Void)?
        if let heapGraph { heapCapture = { label in heapGraph.capture(labelled: label) } }
        let context = CaseContext(
            strategy: spec.strategy, repetition: spec.repetition,
            gaugeNames: workload.descriptor.gauges.map(\.name), scratchDirectory: environment.scratchDirectory,
            captureStack: captureStack, heapCapture: heapCapture)
        self.context = context
        let limit = MemoryLimitOutcome()
        self.limit = limit
        let watch = CaseExecutor.footprintWatch(
            spec, context: context, probe: probe, outcome: limit,
            onMemoryLimit: Self.onMemoryLimit(spec, environment, heapGraph: heapGraph))
        sequence = try CaseSequence(
            probe: probe, phaseNames: spec.phaseNames, settle: .nanoseconds(spec.settleNanoseconds),
            exact: spec.peakMode == .exact
        ) { phaseIndex throws(MeasurementError) in
            guard spec.samplingIntervalNanoseconds > 0 else { return nil }
            return try Sampler(
                probe: probe, interval: .nanoseconds(spec.samplingIntervalNanoseconds), capacity: spec.sampleCapacity,
                gauges: context.gauges + CaseExecutor.budgetGauges(spec, context), phaseNames: spec.phaseNames,
                phaseIndex: phaseIndex, watch: watch, sampleFile: environment.sampleFile)
        }
    }

    /// What a case process stopped by its memory limit does: an attributed one writes the agent's record first
    /// (`run` cannot, it never returns), so the strategy that ran out of memory keeps its stacks; one with a heap graph
    /// analyses its capture at the peak, so it says what held the memory that reached the limit.
    private static func onMemoryLimit(
        _ spec: CaseSpec, _ environment: CaseEnvironment, heapGraph: CaseHeapGraph?
    ) -> (@Sendable (CaseOutcome) -> Void)? {
        guard let handOver = environment.onMemoryLimit else { return nil }
        let recordFile = spec.attribution != nil ? environment.recordFile : nil
        guard recordFile != nil || heapGraph != nil else { return handOver }
        return { killed in
            if let recordFile { _ = Agent.writeRecord(to: recordFile) }  // when it fails, the runner reports it missing
            guard case .killedByMemoryLimit(let hit, let measurements) = killed,
                let graph = heapGraph?.captureAtMemoryLimit()
            else { return handOver(killed) }
            handOver(.killedByMemoryLimit(hit: hit, measurements: measurements.adding(heapGraph: graph)))
        }
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
        try sequence.prepare()
        // What no root reaches before the work is not the workload's leak: captured now, subtracted by the judgement.
        heapGraph?.captureBeforeBaseline()
        // Baseline: what the harness itself holds once everything it needs exists.
        sequence.settle()
        sequence.takeBaseline()
        let baseline = sequence.baseline
        limit.baselineAllocatedBytes.store(baseline.allocatedBytes, ordering: .releasing)
        if spec.attribution != nil {
            // The live set per stack at the baseline is subtracted from the one at the peak. The snapshot's level
            // is the agent's exact count, which stacks imply whatever the peak mode.
            Agent.restartPeakSnapshot(
                levelBytes: baseline.exactLiveBytes ?? Agent.liveBytes() ?? baseline.allocatedBytes)
            Agent.mark("baseline", timeNanoseconds: 0)
        }
        try sequence.startSampling()
    }

    /// Sets up, runs every step and tears down; a workload error ends the script early. What the
    /// workload's calls allocate on this thread is booked to the workload, the rest to the harness.
    /// `runScript()` on a thread of its own that has ended before the heap is captured after teardown: a
    /// conservative scan takes any word of a live stack for a reference, and the frames that ran the workload would
    /// keep what it dropped. For cases that capture their heap only (their figures never gate: the harness's own
    /// allocations are booked on the thread that took the baseline).
    func runScriptOnItsOwnThread() -> ScriptResult {
        // Safety: `result` is written by the thread before it ends and read after `join`, which orders the two.
        final class Handoff: @unchecked Sendable {
            let run: CaseRun
            var result: ScriptResult?
            init(_ run: CaseRun) { self.run = run }
        }
        let handoff = Handoff(self)
        guard let thread = DedicatedThread({ handoff.result = handoff.run.runScript() }) else { return runScript() }
        thread.join()
        return handoff.result
            ?? ScriptResult(failure: "the script's thread ended without a result", metrics: [], growth: [])
    }

    func runScript() -> ScriptResult {
        var result = ScriptResult(failure: nil, metrics: [], growth: [])
        // `sequence.phaseNames` is read once: `spec.phaseNames` builds a new array on every call.
        let phaseCount = sequence.phaseNames.count
        sequence.enterPhase(0)
        do {
            var mark = sequence.beginWorkloadCall()
            var workloadCase: (any WorkloadCase)? = try workload.makeCase(
                strategy: spec.strategy, parameters: spec.parameters, context: context)
            try workloadCase?.setUp(context: context)
            sequence.endWorkloadCall(mark)
            // By index: iterating `enumerated()` makes the runtime build a generic type's metadata the first
            // time, an allocation of the harness after the baseline.
            for index in 0..<spec.steps.count {
                sequence.enterPhase(index + 1)
                try run(spec.steps[index], in: workloadCase, growth: &result.growth)
            }
            sequence.enterPhase(phaseCount - 1)
            mark = sequence.beginWorkloadCall()
            try workloadCase?.tearDown(context: context)
            let metrics = workloadCase?.metrics() ?? []
            // Kept as the harness's: a copy in its mode (the workload's array goes with the case).
            result.metrics = Agent.asHarness { metrics.map { $0 } }
            workloadCase = nil
            sequence.endWorkloadCall(mark)
        } catch {
            result.failure = "\(error)"
        }
        sequence.enterPhase(phaseCount)
        return result
    }

    /// Runs one step: a built-in one here, any other in the workload's case.
    private func run(_ step: StepInvocation, in workloadCase: (any WorkloadCase)?, growth: inout [GrowthSeries]) throws
    {
        switch step.name {
        case builtIn.idle:
            MonotonicClock.sleep(for: step.arguments.duration("duration"))
        case builtIn.settle:
            CaseSequence.settle(probe, nanoseconds: step.arguments.duration("duration").nanoseconds)
        case builtIn.repeat:
            let marks = spec.attribution != nil
            let origin = sequence.baseline.originNanoseconds
            growth.append(
                try CaseExecutor.runRepeat(
                    step, probe: probe, zeroingDeadStack: heapGraph != nil,
                    afterIteration: { iteration in
                        // The live set per stack after each iteration: growth per site.
                        if marks {
                            Agent.mark(
                                "iteration.\(step.phase).\(iteration)",
                                timeNanoseconds: MonotonicClock.nanoseconds() - origin)
                        }
                        // And the heap as a graph: growth per type, suspects and their retaining paths.
                        self.heapGraph?.captureIteration(iteration, phase: step.phase)
                    }
                ) { try self.run($0, in: workloadCase, growth: &growth) })
        default:
            let mark = sequence.beginWorkloadCall()
            defer { sequence.endWorkloadCall(mark) }
            try workloadCase?.run(step, context: context)
        }
    }

    /// Ends the peaks, settles, reads the residue and survivors, and builds the outcome.
    func finish(_ script: ScriptResult) -> CaseOutcome {
        sequence.stop()
        context.memoryWarnings.end()
        sequence.settle()
        // Survivors are read after the settle (workloads may release on other threads).
        let residue = sequence.residue(
            tracked: context.lifetimes, growth: script.growth, survivorStacks: spec.attribution != nil)
        if let killed = limit.outcome.withLock({ $0 }) { return killed }
        let measurements = sequence.measurements(
            residue: residue, metrics: script.metrics,
            memoryWarnings: spec.memoryBudget?.warningBytes == nil ? nil : context.memoryWarnings.postedCount
        ).adding(heapGraph: heapGraph?.captureAfterTeardown(survivors: residue.leaks.survivors))
        if let failure = script.failure { return .failed(reason: failure, measurements: measurements) }
        return .completed(measurements: measurements)
    }
}
