/// The workloads a harness binary knows, by name.
public struct WorkloadCatalog: Sendable {
    /// The workloads in listing order.
    public var workloads: [any Workload]

    public init(_ workloads: [any Workload]) {
        self.workloads = workloads
    }

    /// A catalog of `workloads`, checked: names unique (workloads; and within each workload its
    /// strategies, parameters, steps, gauges and metrics), no step named like a built-in one.
    public init(validating workloads: [any Workload]) throws(CatalogError) {
        var problems: [String] = []
        func duplicates(_ names: [String]) -> [String] {
            Dictionary(grouping: names, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        }
        for name in duplicates(workloads.map(\.descriptor.name)) {
            problems.append("workload '\(name)' is registered more than once; each workload needs its own name")
        }
        for workload in workloads {
            let descriptor = workload.descriptor
            let lists: [(String, [String])] = [
                ("strategy", descriptor.strategies.map(\.name)), ("parameter", descriptor.parameters.map(\.name)),
                ("step", descriptor.steps.map(\.name)), ("gauge", descriptor.gauges.map(\.name)),
                ("metric", descriptor.metrics.map(\.name)),
            ]
            for (kind, names) in lists {
                for name in duplicates(names) {
                    problems.append("workload '\(descriptor.name)' declares the \(kind) '\(name)' more than once")
                }
            }
            for step in descriptor.steps where BuiltInStep.all.contains(where: { $0.name == step.name }) {
                problems.append(
                    "workload '\(descriptor.name)' declares a step '\(step.name)', which is a built-in step")
            }
            if descriptor.strategies.isEmpty {
                problems.append(
                    "workload '\(descriptor.name)' declares no strategy; a scenario needs at least one to run")
            }
        }
        guard problems.isEmpty else { throw CatalogError(problems: problems) }
        self.workloads = workloads
    }

    /// The workload scenario files call `name`, if any.
    public func workload(named name: String) -> (any Workload)? {
        workloads.first { $0.descriptor.name == name }
    }

    /// Every workload name, in listing order.
    public var names: [String] { workloads.map(\.descriptor.name) }
}

/// Steps every workload understands; the harness runs them itself.
public enum BuiltInStep {
    /// `idle: 500ms`: the case does nothing while the sampler keeps sampling.
    public static let idle = StepDescriptor(
        "idle", "Do nothing for a while (the sampler keeps sampling).",
        arguments: [
            .duration("duration", default: .milliseconds(500), range: .zero ... .seconds(3600), "How long to idle.")
        ]
    )
    /// `settle`: flush this thread's cache, purge every arena, wait; shows what is really still held.
    public static let settle = StepDescriptor(
        "settle", "Flush the thread cache, purge all arenas and wait, so resident memory catches up with frees.",
        arguments: [
            .duration(
                "duration", default: .milliseconds(100), range: .zero ... .seconds(600),
                "How long to wait after purging.")
        ]
    )

    /// All built-in steps.
    public static let all = [idle, settle, `repeat`]
}

extension BuiltInStep {
    /// `repeat: {times: 20, warmup: 3, steps: [present, dismiss]}`: runs the nested steps `times`
    /// times; after each iteration the harness settles and reads the live heap, and fits a line
    /// to the iterations after the warm-up (growth per iteration).
    public static let `repeat` = StepDescriptor(
        "repeat",
        "Run the nested 'steps' several times, reading the live heap after each iteration (growth per iteration).",
        arguments: [
            .count("times", default: 10, range: 3...1_000_000, "Iterations."),
            .count(
                "warmup", default: 2, range: 0...1_000_000,
                "Leading iterations left out of the growth fit (lazy globals, framework caches)."),
            .duration(
                "settle", default: .milliseconds(5), range: .zero ... .seconds(60),
                "Wait after each iteration, before the live heap is read."),
        ]
    )

    /// Iterations a `repeat` step needs after its warm-up: a line through fewer leaves no spread to bound its slope.
    public static let minimumMeasuredIterations = 3
}

/// What is wrong with a set of workloads given to `MemHarness.main(workloads:)`.
public struct CatalogError: Error, Sendable, CustomStringConvertible {
    public var problems: [String]
    public var description: String { problems.joined(separator: "\n") }
}
