import HarnessCore

/// Placeholder until the calibration workload lands (same commit series).
public struct CalibrationWorkload: Workload {
    public init() {}
    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(name: "calibration", summary: "", strategies: [], parameters: [], steps: [], defaultSteps: [])
    }
    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase {
        throw CancellationError()
    }
}
