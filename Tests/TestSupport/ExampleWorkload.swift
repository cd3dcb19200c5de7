import WorkloadKit

/// A workload with every parameter kind, for parser tests.
public struct ExampleWorkload: Workload {
    public init() {}

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "example", summary: "For tests.",
            strategies: [StrategyDescriptor("unbounded-dispatch", "bad"), StrategyDescriptor("signal-next", "good")],
            parameters: [
                .count("documents", default: 100, range: 1...1_000_000, "docs"),
                .bytes("payloadSize", default: 4096, range: 0...(1 << 30), "payload"),
                .rate("writeRate", default: 500, range: 0.1...100_000, "writes"),
                .duration("consumerWork", default: .milliseconds(5), range: .zero ... .seconds(10), "work"),
                .fraction("matchingShare", default: 0.5, "share"),
                .flag("verbose", default: false, "flag"),
                .choice("mode", ["cpu", "sleep"], default: "cpu", "mode"),
            ],
            steps: [
                StepDescriptor("subscribe", "start observing"),
                StepDescriptor(
                    "burst", "write",
                    arguments: [
                        .duration("duration", default: .seconds(1), range: .zero ... .seconds(60), "how long")
                    ]),
            ],
            gauges: [GaugeDescriptor("pending", "queue depth")],
            metrics: [
                MetricDescriptor("callbacks", .count, "callbacks delivered"),
                MetricDescriptor("staleness", .milliseconds, "write to processing"),
            ],
            defaultSteps: ["subscribe", "burst"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
    {
        preconditionFailure("not run in parser tests")
    }
}
