import BuiltInWorkloads
import MemHarness

MemHarness.main(workloads: BuiltInWorkloads.all)
