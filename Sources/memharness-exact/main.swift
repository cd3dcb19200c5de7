// memharness with every allocation counted: `run --peak exact` launches its cases here.
import BuiltInWorkloads
import MemHarness

MemHarness.main(workloads: BuiltInWorkloads.all)
