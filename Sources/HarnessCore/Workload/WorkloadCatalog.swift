/// The workloads a harness binary knows, by name.
public struct WorkloadCatalog: Sendable {
    /// The workloads in listing order.
    public var workloads: [any Workload]

    public init(_ workloads: [any Workload]) {
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
        arguments: [.duration("duration", default: .milliseconds(500), range: .zero ... .seconds(3600), "How long to idle.")]
    )
    /// `settle`: flush this thread's cache, purge every arena, wait; shows what is really still held.
    public static let settle = StepDescriptor(
        "settle", "Flush the thread cache, purge all arenas and wait, so resident memory catches up with frees.",
        arguments: [.duration("duration", default: .milliseconds(100), range: .zero ... .seconds(600), "How long to wait after purging.")]
    )

    /// All built-in steps.
    public static let all = [idle, settle, `repeat`]
}
