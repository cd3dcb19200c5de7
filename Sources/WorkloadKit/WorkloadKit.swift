// What a workload imports: the `Workload` protocol and its descriptors, `CaseContext` (gauges,
// lifetime tracking, memory warnings, a scratch directory), parameters, and pacing. The values a
// workload returns (`Metric`, `ParameterValue`, `StepInvocation`) live in HarnessModel, which this
// module re-exports so a workload needs one import.
@_exported import HarnessModel
