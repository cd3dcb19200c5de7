import AllocatorProbe
import Foundation
import HarnessModel
import Measurement
import Scenarios
import WorkloadKit

/// One strategy of a workload, resolved as a run of the harness would resolve it: the descriptor's defaults (or a
/// scenario file's values), the overrides given, the script (the descriptor's default steps, the file's, or the
/// steps given). Everything is checked before anything is measured, with the scenario parser's messages.
struct WorkloadRun {
    let workload: any Workload
    let strategy: String
    let parameters: ParameterValues
    let steps: [StepInvocation]

    /// Resolves `strategy` of `workload`. `parameters` are `NAME=VALUE` texts as `--set` takes them (`responseSize`
    /// → `16KiB`, or a step's argument: `browse.count` → `200`); `steps`, when given, replace the script (each as
    /// one item of a scenario file's `steps:` list); `scenario`, a path, gives the file's parameters and steps.
    init(
        _ workload: any Workload, strategy: String, parameters: KeyValuePairs<String, String>, steps: [String]?,
        scenario: String?
    ) throws(MemoryTestingError) {
        let name = workload.descriptor.name
        do {
            // The workload's descriptor is read here first (its statics made): the harness's reading, in its mode.
            let catalog = try Agent.asHarness { try WorkloadCatalog(validating: [workload]) }
            let parser = ScenarioParser(catalog: catalog)
            var spec =
                try scenario.map { path throws(ScenarioError) in try parser.parse(ScenarioFiles.read(path), file: path)
                }
                ?? parser.parse(Self.scenarioText(name, strategy: strategy), file: "expectMemory(of: \(name))")
            if let steps {
                spec.steps = try parser.parse(
                    Self.scenarioText(name, strategy: strategy, steps: steps), file: "expectMemory(steps:)"
                ).steps
            }
            spec = try applyOverrides(parameters.map { "\($0.key)=\($0.value)" }, to: [spec], catalog: catalog)[0]
            guard workload.descriptor.strategies.contains(where: { $0.name == strategy }) else {
                throw MemoryTestingError.workloadRun(
                    "unknown strategy '\(strategy)' of workload '\(name)'; expected one of: "
                        + workload.descriptor.strategies.map(\.name).joined(separator: ", "))
            }
            self.parameters = spec.strategies.first { $0.name == strategy }?.parameters ?? spec.parameters
            self.steps = spec.steps
        } catch let error as MemoryTestingError {
            throw error
        } catch {
            throw .workloadRun("\(error)")
        }
        self.workload = workload
        self.strategy = strategy
    }

    /// A scenario file of one strategy of `workload`, with `steps` when given (else the workload's default ones).
    private static func scenarioText(_ workload: String, strategy: String, steps: [String]? = nil) -> String {
        var text = "scenario: expect-memory\nworkload: \(workload)\nstrategies:\n  - \"\(strategy)\"\n"
        if let steps { text += "steps:\n" + steps.map { "  - \($0)\n" }.joined() }
        return text
    }

    /// Makes the case, sets it up, runs every step and tears it down, with `memory`'s tracker as the case's: what
    /// the workload tracks is what `leaks:` judges. Built-in steps run as in a harness case (`idle` sleeps, `settle`
    /// settles, `repeat` reads the live heap after each iteration, a growth series `leaks: .none` judges).
    func run(in memory: MemoryContext, probe: JemallocProbe, scratchDirectory: String) throws {
        let context = CaseContext(
            strategy: strategy, gaugeNames: workload.descriptor.gauges.map(\.name), scratchDirectory: scratchDirectory,
            lifetimes: memory.lifetimes)
        var workloadCase: (any WorkloadCase)? = try workload.makeCase(
            strategy: strategy, parameters: parameters, context: context)
        try workloadCase?.setUp(context: context)
        for step in steps { try run(step, in: workloadCase, context: context, memory: memory, probe: probe) }
        try workloadCase?.tearDown(context: context)
        workloadCase = nil
        context.memoryWarnings.end()
    }

    private func run(
        _ step: StepInvocation, in workloadCase: (any WorkloadCase)?, context: CaseContext, memory: MemoryContext,
        probe: JemallocProbe
    ) throws {
        switch step.name {
        case BuiltInStep.idle.name:
            MonotonicClock.sleep(for: step.arguments.duration("duration"))
        case BuiltInStep.settle.name:
            CaseSequence.settle(probe, nanoseconds: step.arguments.duration("duration").nanoseconds)
        case BuiltInStep.repeat.name:
            let series = try CaseExecutor.runRepeat(step, probe: probe) { nested in
                try run(nested, in: workloadCase, context: context, memory: memory, probe: probe)
            }
            memory.repeatGrowth.withLock { $0.append(series) }
        default:
            try workloadCase?.run(step, context: context)
        }
    }
}

extension WorkloadRun {
    /// A fresh folder for the case's files, and the closure that runs the case in it (the folder is removed by
    /// `removeScratch`). Made before the measurement, so none of it counts.
    func prepared() throws(MemoryTestingError) -> (body: (MemoryContext) throws -> Void, scratch: String) {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("memharness-expect-\(getpid())-\(UUID().uuidString)").path
        do {
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        } catch {
            throw .workloadRun("cannot make a scratch folder \(scratch): \(error.localizedDescription)")
        }
        let probe = try MemoryMeter.verifiedProbe()
        return ({ memory in try self.run(in: memory, probe: probe, scratchDirectory: scratch) }, scratch)
    }

    /// Removes the scratch folder of `prepared()`.
    static func removeScratch(_ scratch: String) { try? FileManager.default.removeItem(atPath: scratch) }
}

extension ExpectationCore {
    /// Runs and judges one strategy of a workload (`expectMemory(of:strategy:)`), in a scratch folder of its own,
    /// removed when it returns and, in a replica, before the replica ends.
    func run(_ workloadRun: WorkloadRun) throws -> MemoryFigures {
        let (body, scratch) = try workloadRun.prepared()
        defer { WorkloadRun.removeScratch(scratch) }
        return try run(body, beforeExit: { WorkloadRun.removeScratch(scratch) })
    }
}
