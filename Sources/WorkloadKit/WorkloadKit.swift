import HarnessModel

// What a workload imports: the `Workload` protocol and its descriptors, `CaseContext` (gauges,
// lifetime tracking, memory warnings, a scratch directory), parameters, and pacing.
//
// The values a workload's API takes and returns are the ones a run's record carries, so they live in
// HarnessModel; they are named here, one by one, so that a workload needs this one import and sees
// nothing else of the model (no gates, baselines or exit statuses). Code that needs more imports
// HarnessModel itself.

/// A scenario-specific figure of a case, returned by `WorkloadCase.metrics()`.
public typealias Metric = HarnessModel.Metric
/// A parameter's value: a count, bytes, a duration, a rate, a fraction, a flag or a choice.
public typealias ParameterValue = HarnessModel.ParameterValue
/// The resolved parameters of a case or a step, read by name (`parameters.bytes("responseSize")`).
public typealias ParameterValues = HarnessModel.ParameterValues
/// One step of a scenario's script as `WorkloadCase.run(_:context:)` receives it: its name and arguments.
public typealias StepInvocation = HarnessModel.StepInvocation
/// A type name and a count of objects (`LifetimeTracker.tracked()`, `survivors()`).
public typealias TypeCount = HarnessModel.TypeCount
/// Surviving objects of one type grouped by the stack they were tracked from (`LifetimeTracker.survivorStacks()`).
public typealias SurvivorStack = HarnessModel.SurvivorStack
/// Medians and percentiles over plain values, for a workload's own figures (a staleness p99).
public typealias Statistics = HarnessModel.Statistics
